"""Every JSON answer the tests receive is checked against the app's own `/v1/openapi.json` by an
outside validator (openapi-core), so the published contract is what the server sends.

The Flask test client of every app is `ContractClient` (tests/conftest.py installs it); live-server
tests pass their `requests` answers to `check_live`. One validator per document, built once."""
from __future__ import annotations

import json
import threading

from flask.testing import FlaskClient
from openapi_core import OpenAPI
from openapi_core.contrib.requests import RequestsOpenAPIRequest, RequestsOpenAPIResponse
from openapi_core.contrib.werkzeug import WerkzeugOpenAPIRequest, WerkzeugOpenAPIResponse
from openapi_core.templating.paths.exceptions import OperationNotFound, PathNotFound
from werkzeug.wrappers import Response

_validators: dict[str, OpenAPI] = {}
_lock = threading.Lock()


class _AnsweredRequest(WerkzeugOpenAPIRequest):
    """The request as the response check needs it: its body was read by the app already."""

    @property
    def body(self):
        return None


class ContractMismatch(AssertionError):
    """An answer the document does not describe."""


def validator_for_document(document: dict) -> OpenAPI:
    """The validator of one document, built once per test session. The server address is
    deployment-specific (PUBLIC_BASE_URL), so the check matches paths from `/` on any host."""
    text = json.dumps(document, sort_keys=True)
    with _lock:
        if text not in _validators:
            local = json.loads(text)
            local["servers"] = [{"url": "/"}]
            _validators[text] = OpenAPI.from_dict(local)
        return _validators[text]


def _validator_of_app(app) -> OpenAPI:
    """The document GET /v1/openapi.json serves, as the app builds it (once per app)."""
    validator = app.extensions.get("tests.contract")
    if validator is None:
        from blueprints.docs import document

        with app.app_context():
            validator = validator_for_document(document())
        app.extensions["tests.contract"] = validator
    return validator


def is_json(mimetype: str | None) -> bool:
    mimetype = (mimetype or "").split(";")[0].strip().lower()
    return mimetype == "application/json" or mimetype.endswith("+json")


def _check(validator: OpenAPI, request, response, describe: str) -> None:
    try:
        validator.validate_response(request, response)
    except (PathNotFound, OperationNotFound):
        return      # a route the contract does not cover (pages, operator routes, unknown paths)
    except Exception as error:  # noqa: BLE001 - every other failure is a mismatch, named with its causes
        raise ContractMismatch(f"{describe}: {_explain(error)}") from None


def _explain(error: Exception) -> str:
    parts = [f"{type(error).__name__}: {error}"]
    for cause in getattr(error, "schema_errors", None) or []:
        parts.append(f"  at {'/'.join(map(str, cause.absolute_path)) or '(root)'}: {cause.message}")
    if error.__cause__ is not None and error.__cause__ is not error:
        parts.append(_explain(error.__cause__))
    return "\n".join(parts)


def check_flask(app, response: Response) -> None:
    """Validate one test-client answer of a Tender app if it is JSON (rq-dashboard's app has no document)."""
    if not is_json(response.mimetype) or response.request is None or "tender.settings" not in app.extensions:
        return
    validator = _validator_of_app(app)
    request = response.request
    _check(validator, _AnsweredRequest(request), WerkzeugOpenAPIResponse(response),
           f"{request.method} {request.full_path.rstrip('?')} -> {response.status_code} {response.get_data()[:300]!r}")


def check_live(document: dict, response) -> None:
    """Validate one `requests` answer of a live server against `document` if it is JSON."""
    _check_requests_answer(validator_for_document(document), response)


def _check_requests_answer(validator: OpenAPI, response) -> None:
    if not is_json(response.headers.get("Content-Type")):
        return
    request = response.request
    _check(validator, RequestsOpenAPIRequest(request), RequestsOpenAPIResponse(response),
           f"{request.method} {request.path_url} -> {response.status_code} {response.content[:300]!r}")


class ContractClient(FlaskClient):
    """The Flask test client, validating every JSON answer against the app's document."""

    def open(self, *args, **kwargs):
        response = super().open(*args, **kwargs)
        check_flask(self.application, response)
        return response


def checked_session(base_url: str):
    """A `requests` session for a live server whose JSON answers are validated against the
    document that server publishes (fetched once, on the first answer)."""
    import requests

    session = requests.Session()
    session.trust_env = False
    validators = []

    def check(response, *args, **kwargs):
        if not validators:
            validators.append(validator_for_document(requests.get(f"{base_url}/v1/openapi.json", timeout=10).json()))
        _check_requests_answer(validators[0], response)

    session.hooks["response"].append(check)
    return session
