def test_health_reports_database_and_redis(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json == {"status": "ok", "components": {"database": "ok", "redis": "ok", "provider": "ok",
                                                            "exchange_rates": "ok"}}
    assert response.headers["X-Request-Id"].startswith("req_")
