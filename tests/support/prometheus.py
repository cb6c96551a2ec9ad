"""Reading GET /metrics in tests."""
import base64

OPERATOR = {"Authorization": "Basic " + base64.b64encode(b"ops:s3cret").decode()}


def samples(text: str) -> dict:
    """{'name{labels}': value} for every sample line of a Prometheus text exposition."""
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1])
            for line in text.splitlines() if line and not line.startswith("#")}


def scrape(client) -> dict:
    response = client.get("/metrics", headers=OPERATOR)
    assert response.status_code == 200, response.get_data(as_text=True)
    assert response.mimetype == "text/plain"
    return samples(response.get_data(as_text=True))
