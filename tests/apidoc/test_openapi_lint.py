"""The OpenAPI document passes Redocly's recommended rules with no error and no warning, so SDK
generators and documentation tools accept it as it is. Every route another change adds is
linted too: the document is the one the app serves."""
import json
import subprocess

from tests.support.node_tools import ROOT, node_tool


def lint(document: dict, tmp_path) -> dict:
    path = tmp_path / "openapi.json"
    path.write_text(json.dumps(document))
    report = tmp_path / "lint.json"
    subprocess.run([str(node_tool("redocly")), "lint", str(path), "--config", str(ROOT / "redocly.yaml"),
                    "--format", "json"], cwd=tmp_path, stdout=report.open("w"), stderr=subprocess.PIPE,
                   timeout=120, env={"PATH": "/usr/bin:/bin", "REDOCLY_TELEMETRY": "off",
                                     "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true"})
    return json.loads(report.read_text())


def problems(result: dict) -> list:
    return [f"{p['severity']} {p['ruleId']}: {p['message']} at {p['location'][0]['pointer']}"
            for p in result["problems"]]


def test_the_served_document_has_no_lint_error_or_warning(client, tmp_path):
    result = lint(client.get("/v1/openapi.json").json, tmp_path)
    assert problems(result) == []
    assert result["totals"]["errors"] == 0 and result["totals"]["warnings"] == 0


def test_the_linter_does_find_problems(client, tmp_path):
    """The lint above can fail: the same document with a null in a string enum does."""
    document = client.get("/v1/openapi.json").json
    document["paths"]["/v1/invoices"]["get"]["parameters"][0]["schema"]["enum"] = ["a", None]
    del document["info"]["license"]
    found = problems(lint(document, tmp_path))
    assert any("no-enum-type-mismatch" in problem for problem in found)
    assert any("info-license" in problem for problem in found)
