"""A stalled Redis (it accepts connections and never answers) costs a request at most one short
timeout per breaker interval (docs/operations.md#redis): limits fail open, nudges and counters are
skipped, and the request answers within 0.5 s plus its own work."""
import socket
import statistics
import threading
import time

import pytest

from infra import queues, redis_breaker


@pytest.fixture
def stalled_redis(monkeypatch):
    """A real client of infra.queues pointed at a local server that accepts and never replies."""
    server = socket.create_server(("127.0.0.1", 0))
    held, stop = [], threading.Event()

    def accept():
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])      # kept open, never answered
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    monkeypatch.setitem(queues._state, "redis", queues.redis())         # restored afterwards
    queues.connect(f"redis://127.0.0.1:{server.getsockname()[1]}/0")    # the client every process builds
    yield
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    server.close()


def _create_timed(client, auth) -> float:
    began = time.monotonic()
    response = client.post("/v1/invoices", json={"amount": "5.00"}, headers=auth)
    assert response.status_code == 201, response.json
    return time.monotonic() - began


def test_requests_answer_within_half_a_second_plus_their_work(client, auth, request):
    own_work = statistics.median(_create_timed(client, auth) for _ in range(5))      # Redis healthy
    request.getfixturevalue("stalled_redis")
    stalled = [_create_timed(client, auth) for _ in range(10)]
    assert max(stalled) < own_work + 0.5, (own_work, stalled)
    assert sum(stalled) < 10 * own_work + 0.5 + 1.0      # one timeout for the breaker interval, not one per request
    assert redis_breaker.breaker_of(queues.redis()).is_open
