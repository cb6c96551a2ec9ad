"""Buyer-facing URLs, built from settings so web handlers and jobs render the same JSON."""
_base = {"checkout": "http://localhost:8000"}


def configure(checkout_base_url: str) -> None:
    _base["checkout"] = checkout_base_url.rstrip("/")


def checkout_url(invoice_public_id: str) -> str:
    return f"{_base['checkout']}/checkout/{invoice_public_id}"


def refund_funding_url(refund_public_id: str) -> str:
    """The merchant's page for funding a refund (docs/refunds.md)."""
    return f"{_base['checkout']}/fund/{refund_public_id}"


def payment_link_url(public_id: str) -> str:
    return f"{_base['checkout']}/pay/{public_id}"


def checkout_base_url() -> str:
    return _base["checkout"]
