"""Stores: created and configured by operators (CLI), read by everything else."""
from __future__ import annotations

import datetime as dt
import secrets
from typing import Iterable

from core import currencies, ids
from core.display_text import is_blank, spoofing_problem
from core.networks import NETWORKS, network_of, payout_wallet_problem
from core.errors import BadRequest, NotFound, validation_error
from models.stores import Store
from services.accounts import api_keys


def _checked_name(name) -> str:
    name = (name or "").strip()
    if not 1 <= len(name) <= 200 or is_blank(name):
        raise BadRequest("validation_error", "name: must be 1 to 200 characters, not all blank", param="name")
    problem = spoofing_problem(name)
    if problem:
        raise BadRequest("validation_error", f"name: {problem}", param="name")
    return name


def create_store(*, name: str, now: dt.datetime, payout_wallet: str | None = None,
                 output_asset: str = "usdc.near", offered: Iterable[str] | None = None) -> Store:
    """`offered`: the asset codes the swap provider offers, when the caller asked it (the CLI does)."""
    name = _checked_name(name)
    output_asset = _checked_output_asset(output_asset, offered)
    if payout_wallet:
        payout_wallet = _checked_wallet(payout_wallet, output_asset)
    return Store.create(
        id=ids.new_uuid(), name=name, payout_wallet=payout_wallet or None, output_asset=output_asset,
        callback_secret=secrets.token_hex(32), created_at=now, updated_at=now,
    )


def get_store(store_id) -> Store:
    parsed = ids.parse_uuid(store_id)
    store = Store.get_or_none(Store.id == parsed) if parsed else None
    if store is None:
        raise NotFound("store_not_found", f"No store {store_id!r}.")
    return store


def _checked_wallet(wallet: str, output_asset: str) -> str:
    """Every place a payout wallet is set goes through here: refused, never stored, when it cannot
    receive the store's output asset."""
    wallet = (wallet or "").strip()
    if not 1 <= len(wallet) <= 256:
        raise BadRequest("validation_error", "wallet: must be 1 to 256 characters", param="wallet")
    problem = payout_wallet_problem(output_asset, wallet)
    if problem:
        raise BadRequest("validation_error", f"wallet: {problem}", param="wallet")
    return wallet


def _checked_output_asset(asset, offered: Iterable[str] | None) -> str:
    """Every place a store's output asset is set goes through here: a stablecoin (an asset worth a
    currency, or every rate would be wrong), on a network whose addresses Tender can check (so the
    payout wallet can be), and one the swap provider offers."""
    asset = (asset or "").strip()
    if not asset or len(asset) > 64 or currencies.asset_currency(asset) is None:
        raise validation_error("output_asset", f"{asset[:64]!r} is not a stablecoin Tender pays out in "
                               "(such as usdc.near or usdt.tron)")
    if network_of(asset) not in NETWORKS:
        raise validation_error("output_asset", f"no address rule is known for the network of {asset!r}")
    if offered is not None and asset not in set(offered):
        raise validation_error("output_asset", f"{asset!r} is not offered by the swap provider")
    return asset


def payout_asset_choices(offered: Iterable[str]) -> list[str]:
    """The offered assets a store may be paid out in (what `_checked_output_asset` accepts)."""
    choices = []
    for code in sorted(set(offered)):
        try:
            choices.append(_checked_output_asset(code, None))
        except BadRequest:
            continue
    return choices


def rename(store: Store, name: str, *, now: dt.datetime) -> Store:
    Store.update(name=_checked_name(name), updated_at=now).where(Store.id == store.id).execute()
    api_keys.forget_cached_keys()          # keys carry their store (and its name)
    return Store.get_by_id(store.id)


def require_totp(store: Store, required: bool, *, now: dt.datetime) -> Store:
    Store.update(require_totp=bool(required), updated_at=now).where(Store.id == store.id).execute()
    return Store.get_by_id(store.id)


MAX_FEE_BPS = 500


def set_fee(store: Store, fee_bps: int | None, *, now: dt.datetime) -> Store:
    """The operator's fee for this store, in basis points (0-500); None: OPERATOR_FEE_BPS. Later
    commits use it; an invoice keeps the fee its commit fixed."""
    if fee_bps is not None and not 0 <= fee_bps <= MAX_FEE_BPS:
        raise validation_error("bps", f"must be between 0 and {MAX_FEE_BPS}")
    Store.update(fee_bps=fee_bps, updated_at=now).where(Store.id == store.id).execute()
    return Store.get_by_id(store.id)


def set_output_asset(store: Store, asset: str, *, offered: Iterable[str], wallet: str | None = None,
                     now: dt.datetime) -> Store:
    """Pay the store out in another asset from its next invoice on (an invoice keeps the asset it was
    made with). The payout wallet must receive the new asset: `wallet` replaces it in the same change
    (a move to another network needs both at once); without it the current wallet is checked."""
    asset = _checked_output_asset(asset, offered)
    wallet = wallet if wallet and wallet.strip() else store.payout_wallet
    if wallet:
        wallet = _checked_wallet(wallet, asset)
    Store.update(output_asset=asset, payout_wallet=wallet, updated_at=now).where(Store.id == store.id).execute()
    api_keys.forget_cached_keys()          # keys carry their store: this process prices new invoices in it at once
    return Store.get_by_id(store.id)


def set_payout_wallet(store: Store, wallet: str, *, now: dt.datetime) -> Store:
    wallet = _checked_wallet(wallet, store.output_asset)
    Store.update(payout_wallet=wallet, updated_at=now).where(Store.id == store.id).execute()
    api_keys.forget_cached_keys()          # keys carry their store: this process sees the wallet at once
    return Store.get_by_id(store.id)
