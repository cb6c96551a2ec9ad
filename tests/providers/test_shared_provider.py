"""One swap provider per process (providers.shared), whoever asks: routes, checkouts, jobs."""
import dataclasses

import providers
from jobs import provider as job_provider
from tests import factories


def test_one_provider_per_process_and_settings(settings):
    first = providers.shared(settings)
    assert providers.shared(settings) is first
    other = dataclasses.replace(settings, sandbox_latency_ms=settings.sandbox_latency_ms + 1)
    assert providers.shared(other) is not first


def test_checkouts_and_public_routes_reuse_the_process_provider(client, store, settings, monkeypatch):
    import jobs

    jobs.use_runtime(settings)
    built = []
    real_get_provider = providers.get_provider
    monkeypatch.setattr(providers, "_shared", {"key": None, "provider": None})
    monkeypatch.setattr(providers, "get_provider", lambda s: built.append(s) or real_get_provider(s))
    link = factories.make_payment_link(store)
    for _ in range(3):
        response = client.post(f"/v1/public/payment-links/{link.plpub_id}/checkout",
                               json={"origin_asset": "xlm", "refund_to": "GBUYER"})
        assert response.status_code == 201, response.json
        assert client.get("/v1/public/assets").status_code == 200
    assert job_provider() is providers.shared(settings)
    assert len(built) == 1
