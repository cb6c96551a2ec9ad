"""One client may have a bounded number of requests arriving at once (blueprints/arriving_requests.py)."""
from blueprints.arriving_requests import ArrivingRequests


def test_a_client_at_its_bound_is_refused_until_one_of_its_requests_has_arrived():
    arriving = ArrivingRequests()
    first, second = arriving.enter("2001:db8::1", 2), arriving.enter("2001:db8::2", 2)
    assert first == second == "2001:db8::/64"
    assert arriving.enter("2001:db8::3", 2) is None            # the same /64: the same client
    assert arriving.enter("2001:db8:0:1::1", 2) is not None     # another /64: another client
    arriving.leave(first)
    assert arriving.enter("2001:db8::3", 2) == "2001:db8::/64"


def test_no_bound_counts_without_refusing():
    arriving = ArrivingRequests()
    assert all(arriving.enter("203.0.113.9", 0) for _ in range(100))
