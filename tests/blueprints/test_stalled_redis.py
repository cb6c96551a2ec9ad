"""A stalled Redis (it accepts connections and never answers) costs a request at most one short
timeout per breaker interval (docs/operations.md#redis): limits fail open, nudges and counters are
skipped. Counted in waits (connections the stalled server took), not in seconds: the times of a
loaded test machine vary by more than the 0.25 s timeout."""
import socket
import threading

import pytest

from infra import queues, redis_breaker


@pytest.fixture
def stalled_redis(monkeypatch):
    """A real client of infra.queues pointed at a local server that accepts and never replies;
    yields a function that stops the server and says how many connections it took."""
    server = socket.create_server(("127.0.0.1", 0))
    held, stop = [], threading.Event()

    def accept():
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])      # kept open, never answered
            except OSError:
                continue

    def connections_taken() -> int:
        stop.set()
        thread.join(5)
        server.setblocking(False)
        while True:                                  # and those still waiting to be accepted
            try:
                held.append(server.accept()[0])
            except BlockingIOError:
                return len(held)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    monkeypatch.setitem(queues._state, "redis", queues.redis())         # restored afterwards
    queues.connect(f"redis://127.0.0.1:{server.getsockname()[1]}/0")    # the client every process builds
    yield connections_taken
    stop.set()
    thread.join(5)
    for conn in held:
        conn.close()
    server.close()


def test_a_stalled_redis_costs_one_short_wait_per_breaker_interval_not_one_per_request(client, auth, stalled_redis):
    breaker = redis_breaker.breaker_of(queues.redis())
    breaker.open_seconds = 60          # the ten requests fall in one interval, however slow the machine
    statuses = [client.post("/v1/invoices", json={"amount": "5.00"}, headers=auth).status_code for _ in range(10)]
    assert statuses == [201] * 10      # rate limits fail open; nudges and counters are skipped
    assert breaker.is_open
    assert stalled_redis() == 1        # the first request's first call waited; every later call failed at once
    # ... and that one wait was the short one.
    assert queues.redis().connection_pool.connection_kwargs["socket_timeout"] == redis_breaker.SOCKET_TIMEOUT_SECONDS
