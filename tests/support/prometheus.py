"""Reading GET /metrics in tests, with prometheus_client's own parser."""
import base64

from prometheus_client.parser import text_string_to_metric_families

OPERATOR = {"Authorization": "Basic " + base64.b64encode(b"ops:s3cret").decode()}


def samples(text: str) -> dict:
    """{'name{labels}': value} for every sample of a Prometheus text exposition, labels in name
    order; the parser fails on anything that is not valid exposition text."""
    return {sample.name + "{" + ",".join(f'{name}="{value}"' for name, value in sorted(sample.labels.items())) + "}"
            if sample.labels else sample.name: sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def scrape(client) -> dict:
    response = client.get("/metrics", headers=OPERATOR)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/plain"
    return samples(response.get_data(as_text=True))
