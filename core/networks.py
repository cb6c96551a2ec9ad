"""What we know of each chain: a display name and its address format.

For the buyer's refund address the format check is a typo guard, run by the page before it asks
for a deposit address; the provider stays the judge of what it accepts. For a store's payout
wallet it is the rule: a wallet that does not fit is refused wherever it is set. Patterns use only syntax
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
    # A NEAR account id: 2 to 64 characters, dot-separated parts of lower-case letters and digits
    # joined by single `-` or `_` (alice.near, my_shop-1.near); implicit accounts (64 hex, or 0x and
    # 40 hex) fit the same rule.
    "near": ("NEAR", r"^(?=.{2,64}$)([a-z0-9]+[-_])*[a-z0-9]+(\.([a-z0-9]+[-_])*[a-z0-9]+)*$"),
    "tron": ("Tron", "^T" + _B58 + r"{33}$"),
    "stellar": ("Stellar", r"^G[A-Z2-7]{55}$"),
}


# A native coin's code names its own chain (`btc`), with a few exceptions.
NATIVE_NETWORKS = {"xlm": "stellar", "trx": "tron", "bnb": "bsc", "ada": "cardano"}


def network_of(asset_code: str) -> str:
    """`usdc.eth` -> `eth`; `btc` -> `btc`; `xlm` -> `stellar`."""
    if "." in asset_code:
        return asset_code.split(".", 1)[1]
    return NATIVE_NETWORKS.get(asset_code, asset_code)


def label(network: str) -> str:
    return NETWORKS.get(network, (network.upper(), None))[0]


def address_looks_valid(network: str, address: str) -> bool:
    """True when `address` has the network's shape (or the network has no known shape)."""
    pattern = NETWORKS.get(network, (None, None))[1]
    return pattern is None or re.fullmatch(pattern, address) is not None


def payout_wallet_problem(output_asset: str, wallet: str) -> str | None:
    """Why `wallet` cannot receive the store's payouts in `output_asset`, or None when it can.

    Stricter than the buyer's typo guard: a wrong payout wallet loses the merchant's money at every
    settlement, so a network without a known address rule is refused rather than trusted."""
    network = network_of(output_asset)
    if network not in NETWORKS:
        return f"no address rule is known for the network of {output_asset!r}"
    if not address_looks_valid(network, wallet):
        kind = "a NEAR account id (such as shop.near)" if network == "near" else f"an address on {label(network)}"
        return f"must be {kind} to receive {output_asset}"
    return None


def page_rules() -> dict:
    """{network: {"label", "pattern"}} for the hosted pages' script."""
    return {code: {"label": name, "pattern": pattern} for code, (name, pattern) in NETWORKS.items()}


SHORT_HEAD, SHORT_TAIL = 6, 4


def shortened(address: str | None) -> str | None:
    """An address as Tender shows it to someone who should recognise it but need not read it whole
    (the first six and last four characters): enough for its owner to tell it is theirs, too little
    to copy. static/common.js writes the same rule for the pages' comparisons."""
    if address is None or len(address) <= SHORT_HEAD + SHORT_TAIL + 1:
        return address
    return f"{address[:SHORT_HEAD]}…{address[-SHORT_TAIL:]}"
