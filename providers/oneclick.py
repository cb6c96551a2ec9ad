"""The `oneclick` swap provider: a `requests` client for NEAR Intents' 1Click API (v0).

Field names follow the 1Click OpenAPI spec (docs.near-intents.org, one-click-sdk-typescript); what
Tender relies on, and what it does when that fails, is in docs/payment-engine.md.
* `slippageTolerance` is required and is in basis points; `depositMode` (SIMPLE/MEMO) tells memo
  chains apart (learned from a 400 asking for MEMO as well as from MEMO_CHAINS).
* EXACT_OUTPUT: `quote.amountIn` already carries the slippage buffer (`minAmountIn` is the
  floor); any excess is refunded to `refundTo`. We report `amountIn` as what the buyer sends.
* `swapDetails.depositedAmount` is what reached the deposit address, `refundedAmount` what went
  back; `originChainTxHashes` mixes deposits and refunds in no promised order.
* Auth: `X-API-Key` (recommended) or Bearer JWT (legacy); 401/403 is ProviderAuthFailed.
* Nothing says a wet quote is idempotent (each one derives a fresh deposit address), so only
  reads and dry quotes are retried.
"""
from __future__ import annotations

import datetime as dt
from contextlib import contextmanager
from decimal import ROUND_CEILING, Decimal, localcontext
import json
import time
from typing import Any, Callable, Iterator

import requests

from providers import base
from providers.base import (
    Asset, DepositStatus, ProviderAuthFailed, ProviderRejected, ProviderUnavailable, Quote, QuoteRequest,
    ReverseQuoteRequest,
)

# A chain's own coin, so that ETH on eth is `eth` but ETH on base is `eth.base`.
NATIVE_SYMBOLS = {
    "btc": "BTC", "eth": "ETH", "sol": "SOL", "near": "NEAR", "ton": "TON", "tron": "TRX",
    "xrp": "XRP", "doge": "DOGE", "ltc": "LTC", "zec": "ZEC", "bch": "BCH", "sui": "SUI",
    "cardano": "ADA", "avax": "AVAX", "bsc": "BNB", "pol": "POL", "stellar": "XLM",
}
# Assets not offered: NEAR is listed only as wNEAR (`nep141:wrap.near`), and the NEAR Intents
# documents disagree on whether a native NEAR transfer to the deposit address is credited, so a
# buyer shown "NEAR" could lose the payment (docs/decisions.md, "Payment engine").
AMBIGUOUS_DEPOSITS = frozenset({"nep141:wrap.near"})
# Chains whose deposit address is shared and needs a memo (1Click `depositMode: MEMO`), as 1Click's
# own notes name them. Only a first guess: a 400 asking for MEMO teaches the adapter another one.
MEMO_CHAINS = frozenset({"stellar", "xrp", "ton"})
# A price-only (dry) quote has no buyer address yet, and maybe no payout wallet: 1Click still
# requires `refundTo`/`recipient` valid for their type, so those go to a NEAR account inside
# NEAR Intents (`INTENTS`). A dry quote issues no deposit address, so nothing is ever sent there.
DRY_QUOTE_ACCOUNT = "intents.near"


class UnsupportedAsset(ProviderRejected):
    """The asset code is not one 1Click lists."""


class RateLimited(ProviderUnavailable):
    """429: a later attempt will pass, but retrying at once would only prolong the limit."""


def to_smallest_units(amount: Decimal, decimals: int) -> str:
    """Whole units -> integer string, rounded up: with EXACT_OUTPUT the merchant never gets less."""
    with localcontext() as ctx:
        ctx.prec = 100  # 10**24-scaled amounts overflow the default 28 digits
        return str(int(amount.scaleb(decimals).to_integral_value(rounding=ROUND_CEILING)))


def from_smallest_units(raw: Any, decimals: int) -> Decimal:
    text = str(raw)
    if not text.isdigit():
        raise ValueError(f"not an integer amount: {raw!r}")
    with localcontext() as ctx:
        ctx.prec = 100
        return Decimal(text).scaleb(-decimals)


def _naive_utc(value: dt.datetime) -> dt.datetime:
    """The interface speaks naive UTC; tolerate an aware value all the same."""
    return value if value.tzinfo is None else value.astimezone(dt.timezone.utc).replace(tzinfo=None)


def parse_utc(text: str) -> dt.datetime:
    return _naive_utc(dt.datetime.fromisoformat(text))  # 1Click sends `...Z`


def format_utc(value: dt.datetime) -> str:
    return _naive_utc(value).isoformat(timespec="milliseconds") + "Z"


@contextmanager
def _parsing(what: str) -> Iterator[None]:
    """A missing or mistyped field is the provider's fault and may clear up: retry later."""
    try:
        yield
    except (KeyError, TypeError, ValueError, ArithmeticError) as exc:
        raise ProviderUnavailable(f"1Click sent a malformed {what}: {exc!r}") from exc


def _decimal_or_none(value: Any) -> Decimal | None:
    return None if value is None else Decimal(str(value))


class OneClickProvider:
    name = "oneclick"

    def __init__(self, base_url: str, jwt: str | None, *, api_key: str | None = None, timeout: float = 10.0,
                 retries: int = 2, session: requests.Session | None = None, backoff: float = 0.25,
                 slippage_bps: int = 100, referral: str | None = None, token_ttl: float = 300.0,
                 clock: Callable[[], float] = time.monotonic,
                 on_auth_failure: Callable[[int, str], None] | None = None,
                 on_unreachable: Callable[[str], None] | None = None,
                 on_answer: Callable[[], None] | None = None) -> None:
        """`api_key` (sent as `X-API-Key`, 1Click's recommended auth) wins over `jwt` (Bearer,
        legacy). `on_auth_failure(status, message)` is told of every 401/403, `on_unreachable(message)`
        of every call that got no usable answer after its retries, `on_answer()` of every answer."""
        self._base_url = base_url.rstrip("/")
        self._jwt = jwt
        self._api_key = api_key
        self._on_auth_failure, self._on_unreachable, self._on_answer = on_auth_failure, on_unreachable, on_answer
        self._timeout, self._retries = timeout, retries
        self._session = session or requests.Session()
        self._backoff = backoff
        self._slippage_bps = slippage_bps
        self._referral = referral
        self._token_ttl = token_ttl
        self._clock = clock
        self._assets: dict[str, Asset] = {}
        self._assets_by_id: dict[str, Asset] = {}
        self._assets_fetched_at: float | None = None
        self._memo_networks: set[str] = set(MEMO_CHAINS)

    # --- the interface -------------------------------------------------------------------

    def supported_assets(self) -> list[Asset]:
        return list(self._asset_table().values())

    def quote(self, request: QuoteRequest) -> Quote:
        origin = self._asset(request.origin_asset)
        destination = self._asset(request.destination_asset)
        if request.amount_out <= 0:
            raise ProviderRejected("amount_out must be positive")
        body = self._quote_body(request, origin, destination)
        answer = self._post_quote(body, origin, dry=request.dry)
        with _parsing("quote"):
            return self._parse_quote(answer, request, origin, destination)

    def reverse_quote(self, request: ReverseQuoteRequest) -> Quote:
        """A merchant refund (docs/refunds.md): EXACT_INPUT from the store's output asset to the
        buyer's, `recipient` the buyer, `refundTo` the store's payout wallet, always committed."""
        origin = self._asset(request.origin_asset)
        destination = self._asset(request.destination_asset)
        if request.amount_in <= 0:
            raise ProviderRejected("amount_in must be positive")
        body = self._swap_body("EXACT_INPUT", origin, destination,
                               amount=to_smallest_units(request.amount_in, origin.decimals),
                               deadline=request.deadline, dry=False, refund_to=request.refund_to,
                               recipient=request.recipient)
        answer = self._post_quote(body, origin, dry=False)
        committed = QuoteRequest(origin_asset=request.origin_asset, destination_asset=request.destination_asset,
                                 amount_out=Decimal(0), recipient=request.recipient, refund_to=request.refund_to,
                                 deadline=request.deadline, dry=False, reference=request.reference)
        with _parsing("quote"):
            return self._parse_quote(answer, committed, origin, destination)

    def _post_quote(self, body: dict[str, Any], origin: Asset, *, dry: bool) -> Any:
        """POST /v0/quote; only a dry quote is retried (a wet one derives a fresh address each time)."""
        try:
            return self._request("POST", "/v0/quote", json_body=body, retry=dry)
        except ProviderRejected as refusal:
            if body["depositMode"] == "MEMO" or "MEMO" not in str(refusal):
                raise
            # A memo chain we did not know: a refused quote issued no address, so asking again is safe.
            self._memo_networks.add(origin.network)
            self._assets_fetched_at = None      # rebuild the table so the asset says it needs a memo
            body["depositMode"] = "MEMO"
            return self._request("POST", "/v0/quote", json_body=body, retry=dry)

    def deposit_status(self, deposit_address: str, deposit_memo: str | None = None, *,
                       decimals: tuple[int, int] | None = None) -> DepositStatus:
        """`decimals` (origin, destination) as recorded at quote time; without them (an invoice
        quoted before they were recorded) the current token list is the fallback."""
        params = {"depositAddress": deposit_address}
        if deposit_memo is not None:
            params["depositMemo"] = deposit_memo
        answer = self._request("GET", "/v0/status", params=params, retry=True)
        if decimals is None:
            self._asset_table()
        with _parsing("status"):
            return self._parse_status(answer, decimals)

    # --- assets --------------------------------------------------------------------------

    def _asset(self, code: str) -> Asset:
        asset = self._asset_table().get(code)
        if asset is None:
            raise UnsupportedAsset(f"1Click does not offer asset {code!r}")
        return asset

    def _asset_table(self) -> dict[str, Asset]:
        fetched_at = self._assets_fetched_at
        if fetched_at is None or self._clock() - fetched_at >= self._token_ttl:
            answer = self._request("GET", "/v0/tokens", retry=True)
            with _parsing("token list"):
                assets = [_parse_token(entry, self._memo_networks) for entry in answer
                          if entry["assetId"] not in AMBIGUOUS_DEPOSITS]
            self._assets, self._assets_by_id = {}, {}
            for asset in assets:
                self._assets.setdefault(asset.code, asset)  # on a clash the first listed wins
                self._assets_by_id[asset.provider_asset_id] = asset
            self._assets_fetched_at = self._clock()
        return self._assets

    def _decimals_of(self, quote_request: dict[str, Any], key: str) -> int | None:
        asset_id = quote_request.get(key)
        return None if asset_id is None else self._assets_by_id[asset_id].decimals

    # --- quotes and statuses -------------------------------------------------------------

    def _quote_body(self, request: QuoteRequest, origin: Asset, destination: Asset) -> dict[str, Any]:
        body = self._swap_body("EXACT_OUTPUT", origin, destination,
                               amount=to_smallest_units(request.amount_out, destination.decimals),
                               deadline=request.deadline, dry=request.dry, refund_to=request.refund_to,
                               recipient=request.recipient)
        if request.app_fee_bps:     # the operator's fee, inside the same swap (payment quotes only)
            body["appFees"] = [{"recipient": request.app_fee_recipient, "fee": request.app_fee_bps}]
        return body

    def _swap_body(self, swap_type: str, origin: Asset, destination: Asset, *, amount: str, deadline: dt.datetime,
                   dry: bool, refund_to: str, recipient: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "dry": dry,
            "swapType": swap_type,
            "slippageTolerance": self._slippage_bps,
            "originAsset": origin.provider_asset_id,
            "depositType": "ORIGIN_CHAIN",
            "depositMode": "MEMO" if origin.network in self._memo_networks else "SIMPLE",
            "destinationAsset": destination.provider_asset_id,
            "amount": amount,
            "deadline": format_utc(deadline),
        }
        body.update(_party("refund", refund_to, "ORIGIN_CHAIN", dry=dry))
        body.update(_party("recipient", recipient, "DESTINATION_CHAIN", dry=dry))
        if self._referral:
            body["referral"] = self._referral
        return body

    @staticmethod
    def _parse_quote(answer: dict[str, Any], request: QuoteRequest, origin: Asset, destination: Asset) -> Quote:
        quote = answer["quote"]
        deposit_address = quote.get("depositAddress")
        if not request.dry and not deposit_address:
            raise KeyError("depositAddress missing from a committed quote")
        estimate = quote.get("timeEstimate")
        return Quote(
            origin_asset=request.origin_asset,
            destination_asset=request.destination_asset,
            amount_in=from_smallest_units(quote["amountIn"], origin.decimals),
            amount_out=from_smallest_units(quote["amountOut"], destination.decimals),
            amount_in_usd=_decimal_or_none(quote.get("amountInUsd")),
            deadline=parse_utc(quote["deadline"]) if quote.get("deadline") else request.deadline,
            deposit_address=deposit_address if not request.dry else None,
            deposit_memo=quote.get("depositMemo") if not request.dry else None,
            correlation_id=answer.get("correlationId"),
            time_estimate_seconds=None if estimate is None else int(estimate),
            origin_decimals=origin.decimals,
            destination_decimals=destination.decimals,
        )

    def _parse_status(self, answer: dict[str, Any], decimals: tuple[int, int] | None) -> DepositStatus:
        status = answer["status"]
        if status not in base.STATUSES:
            raise ProviderUnavailable(f"1Click sent an unknown status {status!r}")
        details = answer.get("swapDetails") or {}
        quote_request = (answer.get("quoteResponse") or {}).get("quoteRequest") or {}
        if decimals is not None:
            origin, destination = decimals
        else:
            origin = self._decimals_of(quote_request, "originAsset")
            destination = self._decimals_of(quote_request, "destinationAsset")
        deposited = "depositedAmount" if details.get("depositedAmount") is not None else "amountIn"
        updated_at = answer.get("updatedAt")
        # 1Click lists refunds among the origin-chain hashes too: a lone hash before any refund
        # (KNOWN_DEPOSIT_TX, PROCESSING) is the deposit; the engine keeps the first one it saw.
        origin_hashes = _hashes(details.get("originChainTxHashes"))
        refunded = _amount(details.get("refundedAmount"), origin)
        return DepositStatus(
            status=status,
            correlation_id=answer.get("correlationId"),
            amount_in=_amount(details.get(deposited), origin),
            amount_in_usd=_decimal_or_none(details.get(f"{deposited}Usd")),
            amount_out=_amount(details.get("amountOut"), destination),
            amount_out_usd=_decimal_or_none(details.get("amountOutUsd")),
            refunded_amount=refunded,
            refunded_amount_usd=_decimal_or_none(details.get("refundedAmountUsd")),
            origin_tx_hashes=origin_hashes,
            deposit_tx_hash=origin_hashes[0] if len(origin_hashes) == 1 and not refunded else None,
            destination_tx_hashes=_hashes(details.get("destinationChainTxHashes")),
            updated_at=parse_utc(updated_at) if updated_at else None,
        )

    # --- HTTP ----------------------------------------------------------------------------

    def _request(self, method: str, path: str, *, params: dict | None = None,
                 json_body: dict | None = None, retry: bool) -> Any:
        attempts = 1 + self._retries if retry else 1
        for attempt in range(attempts):
            if attempt:
                time.sleep(self._backoff * 2 ** (attempt - 1))
            try:
                answer = self._send_once(method, path, params, json_body)
            except (RateLimited, ProviderAuthFailed):
                raise
            except ProviderUnavailable as exc:
                failure = exc
            else:
                if self._on_answer is not None:
                    self._on_answer()
                return answer
        if self._on_unreachable is not None:
            self._on_unreachable(str(failure))
        raise failure

    def _send_once(self, method: str, path: str, params: dict | None, json_body: dict | None) -> Any:
        try:
            response = self._session.request(
                method, self._base_url + path, params=params, json=json_body,
                headers=self._headers(), timeout=(self._timeout, self._timeout),
            )
        except (requests.Timeout, requests.ConnectionError) as exc:
            raise ProviderUnavailable(f"1Click {method} {path} failed: {exc}") from exc
        status = response.status_code
        if status == 429:
            raise RateLimited(f"1Click {method} {path} answered 429: {_message(response)}")
        if status in (401, 403):
            message = f"1Click {method} {path} answered {status}: {_message(response)}"
            if self._on_auth_failure is not None:
                self._on_auth_failure(status, message)
            raise ProviderAuthFailed(message)
        if status >= 500:
            raise ProviderUnavailable(f"1Click {method} {path} answered {status}")
        if status >= 400:
            raise ProviderRejected(f"1Click {method} {path} answered {status}: {_message(response)}")
        with _parsing(f"answer to {method} {path}"):
            return json.loads(response.text, parse_float=Decimal)

    def _headers(self) -> dict[str, str]:
        headers = {"Accept": "application/json"}
        if self._api_key:
            headers["X-API-Key"] = self._api_key
        elif self._jwt:
            headers["Authorization"] = f"Bearer {self._jwt}"
        return headers


def _party(role: str, address: str, chain_type: str, *, dry: bool) -> dict[str, str]:
    """`refundTo`/`refundType` or `recipient`/`recipientType`: the address on its chain, or, for a
    dry quote that has none yet, DRY_QUOTE_ACCOUNT inside NEAR Intents."""
    address_field, type_field = ("refundTo", "refundType") if role == "refund" else ("recipient", "recipientType")
    if not address:
        if not dry:
            raise ProviderRejected(f"{address_field} is required for a committed quote")
        return {address_field: DRY_QUOTE_ACCOUNT, type_field: "INTENTS"}
    return {address_field: address, type_field: chain_type}


def _parse_token(entry: dict[str, Any], memo_networks) -> Asset:
    symbol, network = str(entry["symbol"]), str(entry["blockchain"]).lower()
    return Asset(
        code=_asset_code(symbol, network, entry.get("contractAddress")),
        symbol=symbol,
        network=network,
        decimals=int(entry["decimals"]),
        provider_asset_id=str(entry["assetId"]),
        price_usd=_decimal_or_none(entry.get("price")),
        needs_memo=network in memo_networks,
    )


def _asset_code(symbol: str, network: str, contract_address: str | None) -> str:
    if not contract_address and NATIVE_SYMBOLS.get(network) == symbol.upper():
        return symbol.lower()
    return f"{symbol.lower()}.{network}"


def _amount(raw: Any, decimals: int | None) -> Decimal | None:
    if raw is None:
        return None
    if decimals is None:
        raise KeyError("an amount came without its asset")
    return from_smallest_units(raw, decimals)


def _hashes(entries: Any) -> tuple[str, ...]:
    return tuple(str(entry["hash"]) for entry in entries or ())


def _message(response: requests.Response) -> str:
    """1Click errors are `{"message": ...}`; fall back to the raw text."""
    try:
        return str(json.loads(response.text)["message"])
    except (ValueError, KeyError, TypeError):
        return response.text[:200] or response.reason
