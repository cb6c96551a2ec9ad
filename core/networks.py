"""What the hosted pages say about each chain: a display name and a basic address format.

The format check is a typo guard for the buyer's refund address, run by the page before it asks
for a deposit address; the provider stays the judge of what it accepts. Patterns use only syntax
that Python's `re` and JavaScript's RegExp read alike, so the page applies these very strings.
"""
from __future__ import annotations

import re

_B58 = "[1-9A-HJ-NP-Za-km-z]"
NETWORKS = {
    "btc": ("Bitcoin", r"^(bc1[02-9ac-hj-np-z]{11,71}|[13]" + _B58 + r"{25,34})$"),
    "eth": ("Ethereum", r"^0x[0-9a-fA-F]{40}$"),
    "base": ("Base", r"^0x[0-9a-fA-F]{40}$"),
    "sol": ("Solana", "^" + _B58 + r"{32,44}$"),
    # An implicit account (64 hex) or a named one such as alice.near.
    "near": ("NEAR", r"^([0-9a-f]{64}|([a-z0-9]+[-_])*[a-z0-9]+(\.([a-z0-9]+[-_])*[a-z0-9]+)*)$"),
    "tron": ("Tron", "^T" + _B58 + r"{33}$"),
    "stellar": ("Stellar", r"^G[A-Z2-7]{55}$"),
}


def label(network: str) -> str:
    return NETWORKS.get(network, (network.upper(), None))[0]


def address_looks_valid(network: str, address: str) -> bool:
    """True when `address` has the network's shape (or the network has no known shape)."""
    pattern = NETWORKS.get(network, (None, None))[1]
    return pattern is None or re.fullmatch(pattern, address) is not None


def page_rules() -> dict:
    """{network: {"label", "pattern"}} for the hosted pages' script."""
    return {code: {"label": name, "pattern": pattern} for code, (name, pattern) in NETWORKS.items()}
