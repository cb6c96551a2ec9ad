"""A local HTTP server that speaks NEAR Intents' 1Click API (v0) as strictly as its published
definitions (the OpenAPI document behind the official SDKs), so tests catch what the real API refuses.

    with OneClickServer(token="secret") as server:
        provider = OneClickProvider(server.url, "jwt", backoff=0)
        server.inject("/v0/quote", server_error(503), times=2)
        server.script_status(address, "PENDING_DEPOSIT", {"status": "SUCCESS", "swapDetails": {...}})

Stdlib only; binds 127.0.0.1 on an ephemeral port; records every request it receives.

Strict where the real API is (docs/payment-engine.md, "What Tender relies on from 1Click"):
required quote fields and their enums are checked, `refundTo`/`recipient` must match the address
format of their type (ORIGIN_CHAIN / DESTINATION_CHAIN: the asset's chain; INTENTS: a NEAR
account), errors are 400 `{"message": ...}`, a token other than the configured one is 401,
an unknown address is 404 `Deposit address not found`, every wet quote gets a fresh deposit
address, the quote's deadline is the server's own (not the request's), a memo chain quoted
without `depositMode: MEMO` is refused with a message asking for it, and USDC is priced at 0.9999.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
import hashlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import itertools
import json
import re
import threading
from typing import Any
from urllib.parse import parse_qsl, urlsplit

# (assetId, blockchain, symbol, decimals, price in USD, contractAddress), as GET /v0/tokens lists them.
# Ids are 1Click's where we know them; the stellar one is illustrative.
TOKENS = [
    ("nep141:btc.omft.near", "btc", "BTC", 8, "60000", None),
    ("nep141:eth.omft.near", "eth", "ETH", 18, "2000", None),
    ("nep141:sol.omft.near", "sol", "SOL", 9, "150", None),
    ("nep141:wrap.near", "near", "wNEAR", 24, "2.5", "wrap.near"),
    ("nep141:stellar.omft.near", "stellar", "XLM", 7, "0.25", None),
    ("nep141:base.omft.near", "base", "ETH", 18, "2000", None),
    ("nep141:eth-0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48.omft.near", "eth", "USDC", 6, "0.9999",
     "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48"),
    ("nep141:base-0x833589fcd6edb6e08f4c7c32d4f71b54bda02913.omft.near", "base", "USDC", 6, "0.9999",
     "0x833589fcd6edb6e08f4c7c32d4f71b54bda02913"),
    ("nep141:17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1", "near", "USDC", 6, "0.9999",
     "17208628f84f5d6ad33f0da3bbbeb27ffcb398eac501a31bd6ad2011e36133a1"),
    ("nep141:tron-d28a265909efecdcee7c5028585214ea0b96f015.omft.near", "tron", "USDT", 6, "1",
     "TR7NHqjeKQxGTCi8q8ZYhpL8vyW3F8xZ7Y"),
]
MEMO_CHAINS = {"stellar", "xrp", "ton"}
QUOTE_FIELDS = ("dry", "swapType", "slippageTolerance", "originAsset", "depositType", "destinationAsset",
                "amount", "refundTo", "refundType", "recipient", "recipientType", "deadline")
ENUMS = {
    "swapType": ("EXACT_INPUT", "EXACT_OUTPUT", "FLEX_INPUT", "ANY_INPUT"),
    "depositType": ("ORIGIN_CHAIN", "INTENTS"),
    "refundType": ("ORIGIN_CHAIN", "INTENTS"),
    "recipientType": ("DESTINATION_CHAIN", "INTENTS"),
    "depositMode": ("SIMPLE", "MEMO"),
}
_EVM = r"0x[0-9a-fA-F]{40}"
_BASE58 = "[1-9A-HJ-NP-Za-km-z]"
NEAR_ACCOUNT = r"(?=.{2,64}$)(([a-z\d]+[-_])*[a-z\d]+\.)*([a-z\d]+[-_])*[a-z\d]+"
ADDRESS_FORMATS = {
    "eth": _EVM, "base": _EVM, "arb": _EVM, "bsc": _EVM, "pol": _EVM, "avax": _EVM,
    "btc": rf"(bc1[a-z0-9]{{8,87}}|[13]{_BASE58}{{25,34}})",
    "sol": rf"{_BASE58}{{32,44}}",
    "near": NEAR_ACCOUNT,
    "stellar": r"G[A-Z2-7]{55}",
    "tron": rf"T{_BASE58}{{33}}",
    "xrp": rf"r{_BASE58}{{24,34}}",
    "ton": r"[EU]Q[A-Za-z0-9_-]{46}",
}
QUOTE_LIFETIME = dt.timedelta(hours=24)   # the server's own deadline for a wet quote's deposit


@dataclass(frozen=True)
class Fault:
    """One scripted misbehaviour: wait `delay` seconds, then answer `status` with `body`
    (or, when body is None, the normal answer)."""
    status: int = 200
    body: bytes | None = None
    delay: float = 0.0


def server_error(status: int = 503) -> Fault:
    return Fault(status=status, body=b'{"message": "upstream unavailable"}')


def malformed_json() -> Fault:
    return Fault(body=b'{"quote": {"amountIn": ')


def rejected(status: int = 400, message: str = "amount is too low") -> Fault:
    return Fault(status=status, body=json.dumps({"message": message}).encode())


def slow(seconds: float) -> Fault:
    return Fault(delay=seconds)


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: Any


@dataclass
class _Injection:
    fault: Fault
    remaining: int | None  # None: forever


@dataclass
class _State:
    requests: list[RecordedRequest] = field(default_factory=list)
    injections: dict[str, list[_Injection]] = field(default_factory=dict)
    statuses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    quotes: dict[str, dict[str, Any]] = field(default_factory=dict)


class OneClickServer:
    def __init__(self, tokens: list[tuple] | None = None, *, token: str | None = None) -> None:
        """`token`: the API key / JWT this server accepts; a request carrying another one is 401
        (one carrying none is served, as 1Click does, at a higher fee)."""
        self.tokens = list(tokens or TOKENS)
        self.token = token
        self._addresses = itertools.count(1)
        self._state = _State()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.01},
                                        name="oneclick-server", daemon=True)

    # --- lifecycle -----------------------------------------------------------------------

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def is_running(self) -> bool:
        return self._thread.is_alive()

    def start(self) -> "OneClickServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping on a `slow` fault
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def __enter__(self) -> "OneClickServer":
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    # --- what tests script and inspect ---------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._state.requests)

    def requests_to(self, path: str) -> list[RecordedRequest]:
        return [request for request in self.requests if request.path == path]

    def inject(self, path: str, fault: Fault, times: int | None = 1) -> None:
        """Answer the next `times` requests to `path` with `fault` (None: every request)."""
        with self._lock:
            self._state.injections.setdefault(path, []).append(_Injection(fault, times))

    def script_status(self, deposit_address: str, *steps: str | dict[str, Any]) -> None:
        """Successive GET /v0/status answers for an address; the last one then repeats.
        A step is a status name or a dict merged over the default answer."""
        answers = [{"status": step} if isinstance(step, str) else dict(step) for step in steps]
        with self._lock:
            self._state.statuses[deposit_address] = answers

    # --- answering (called from handler threads) -----------------------------------------

    def _record(self, request: RecordedRequest) -> Fault | None:
        with self._lock:
            self._state.requests.append(request)
            queue = self._state.injections.get(request.path) or []
            if not queue:
                return None
            injection = queue[0]
            if injection.remaining is not None:
                injection.remaining -= 1
                if injection.remaining <= 0:
                    queue.pop(0)
            return injection.fault

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)

    def _answer(self, request: RecordedRequest) -> tuple[int, Any]:
        presented = _presented_token(request.headers)
        if self.token is not None and presented is not None and presented != self.token:
            return 401, {"message": "Unauthorized"}
        if request.method == "GET" and request.path == "/v0/tokens":
            return 200, [_token_json(token) for token in self.tokens]
        if request.method == "POST" and request.path == "/v0/quote":
            return self._answer_quote(request.json)
        if request.method == "GET" and request.path == "/v0/status":
            return self._answer_status(request.query)
        return 404, {"message": f"no route {request.method} {request.path}"}

    def _answer_quote(self, body: Any) -> tuple[int, Any]:
        by_id = {token[0]: token for token in self.tokens}
        problem = _quote_problem(body, by_id)
        if problem:
            return 400, {"message": problem}
        origin, destination = by_id[body["originAsset"]], by_id[body["destinationAsset"]]
        quote = (_exact_input_quote if body["swapType"] == "EXACT_INPUT" else _exact_output_quote)(
            body, origin, destination)
        if not body["dry"]:
            quote.update(_deposit_for(origin, next(self._addresses)))
            server_deadline = format_deadline(dt.datetime.now(dt.timezone.utc) + QUOTE_LIFETIME)
            quote["deadline"] = server_deadline
            quote["timeWhenInactive"] = server_deadline
        answer = {"correlationId": _digest([body, next(self._addresses)])[:32], "timestamp": "2025-01-01T00:00:00.000Z",
                  "signature": "ed25519:test", "quoteRequest": body, "quote": quote}
        if "depositAddress" in quote:
            with self._lock:
                self._state.quotes[quote["depositAddress"]] = answer
        return 200, answer

    def _answer_status(self, query: dict[str, str]) -> tuple[int, Any]:
        address = query.get("depositAddress", "")
        with self._lock:
            steps = self._state.statuses.get(address)
            step = (steps.pop(0) if len(steps) > 1 else steps[0]) if steps else None
            quote = self._state.quotes.get(address)
        if step is None and quote is None:
            return 404, {"message": "Deposit address not found"}
        answer = {"correlationId": "status-" + address[-8:], "status": "PENDING_DEPOSIT",
                  "updatedAt": "2025-01-01T00:05:00.000Z", "quoteResponse": quote or {},
                  "swapDetails": {"intentHashes": [], "nearTxHashes": [],
                                  "originChainTxHashes": [], "destinationChainTxHashes": []}}
        answer.update(step or {})
        return 200, answer


def _handler_for(server: OneClickServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._handle()

        def do_POST(self) -> None:
            self._handle()

        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def _handle(self) -> None:
            request = self._read_request()
            fault = server._record(request)
            if fault and fault.delay:
                server._sleep(fault.delay)
            if fault and fault.body is not None:
                self._send(fault.status, fault.body)
            else:
                status, payload = server._answer(request)
                self._send(status, json.dumps(payload).encode())

        def _read_request(self) -> RecordedRequest:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode(errors="replace")
            return RecordedRequest(self.command, url.path, dict(parse_qsl(url.query)),
                                   {name.lower(): value for name, value in self.headers.items()}, body)

        def _send(self, status: int, body: bytes) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test) before we answered

    return Handler


def _token_json(token: tuple) -> dict[str, Any]:
    asset_id, blockchain, symbol, decimals, price, contract = token
    # The real API sends price as a JSON number; float() only serialises the short literal.
    return {"assetId": asset_id, "decimals": decimals, "blockchain": blockchain, "symbol": symbol,
            "price": float(price), "priceUpdatedAt": "2025-01-01T00:00:00.000Z", "contractAddress": contract}


def _exact_output_quote(body: dict[str, Any], origin: tuple, destination: tuple) -> dict[str, Any]:
    """amountIn = amountOut priced in the origin asset, plus the slippage buffer, rounded up."""
    amount_out = Decimal(body["amount"]).scaleb(-destination[3])
    buffer = 1 + Decimal(body["slippageTolerance"]) / 10000
    # `appFees` are a share of the swap: the buyer sends enough for the exact output and the fees.
    app_fees = 1 - Decimal(sum(fee["fee"] for fee in body.get("appFees", []))) / 10000
    amount_in_whole = amount_out * Decimal(destination[4]) / Decimal(origin[4]) / app_fees * buffer
    amount_in = int(amount_in_whole.scaleb(origin[3]).to_integral_value(rounding=ROUND_CEILING))
    min_in = int((amount_in_whole / buffer).scaleb(origin[3]).to_integral_value(rounding=ROUND_CEILING))
    out_usd = amount_out * Decimal(destination[4])
    return {"amountIn": str(amount_in), "amountInFormatted": str(Decimal(amount_in).scaleb(-origin[3])),
            "amountInUsd": str(out_usd * buffer), "minAmountIn": str(min_in),
            "amountOut": body["amount"], "amountOutFormatted": str(amount_out),
            "amountOutUsd": str(out_usd), "minAmountOut": body["amount"], "timeEstimate": 20}


def _exact_input_quote(body: dict[str, Any], origin: tuple, destination: tuple) -> dict[str, Any]:
    """amountOut = amountIn priced in the destination asset, rounded down; minAmountOut allows the slippage."""
    amount_in = Decimal(body["amount"]).scaleb(-origin[3])
    in_usd = amount_in * Decimal(origin[4])
    amount_out = int((in_usd / Decimal(destination[4])).scaleb(destination[3]).to_integral_value(rounding=ROUND_FLOOR))
    slack = 1 - Decimal(body["slippageTolerance"]) / 10000
    min_out = int((Decimal(amount_out) * slack).to_integral_value(rounding=ROUND_FLOOR))
    return {"amountIn": body["amount"], "amountInFormatted": str(amount_in), "amountInUsd": str(in_usd),
            "minAmountIn": body["amount"], "amountOut": str(amount_out),
            "amountOutFormatted": str(Decimal(amount_out).scaleb(-destination[3])), "amountOutUsd": str(in_usd),
            "minAmountOut": str(min_out), "timeEstimate": 20}


def _deposit_for(origin: tuple, serial: int) -> dict[str, str]:
    """Every wet quote gets a fresh deposit address (memo chains: a shared address and a fresh memo)."""
    if origin[1] in MEMO_CHAINS:
        return {"depositAddress": f"{origin[1]}-shared-deposit", "depositMemo": str(1_000_000 + serial)}
    return {"depositAddress": f"{origin[1]}-deposit-{serial:06d}-{_digest(serial)[:8]}"}


def _presented_token(headers: dict[str, str]) -> str | None:
    if headers.get("x-api-key"):
        return headers["x-api-key"]
    authorization = headers.get("authorization") or ""
    return authorization[len("Bearer "):] if authorization.startswith("Bearer ") else (authorization or None)


def valid_address(chain: str, address: Any) -> bool:
    pattern = ADDRESS_FORMATS.get(chain)
    return isinstance(address, str) and pattern is not None and re.fullmatch(pattern, address) is not None


def _quote_problem(body: Any, by_id: dict[str, tuple]) -> str | None:
    """The 400 message the real API would give, or None when the quote request is acceptable."""
    if not isinstance(body, dict):
        return "body must be a JSON object"
    for name in QUOTE_FIELDS:
        if name not in body or body[name] is None:
            return f"{name} should not be null or undefined"
    for name, allowed in ENUMS.items():
        if name in body and body[name] not in allowed:
            return f"{name} must be one of the following values: {', '.join(allowed)}"
    if not isinstance(body["dry"], bool):
        return "dry must be a boolean value"
    if isinstance(body["slippageTolerance"], bool) or not isinstance(body["slippageTolerance"], (int, float)):
        return "slippageTolerance must be a number"
    if not isinstance(body["amount"], str) or not body["amount"].isdigit() or int(body["amount"]) <= 0:
        return "amount must be a positive integer string in smallest units"
    try:
        dt.datetime.fromisoformat(str(body["deadline"]).replace("Z", "+00:00"))
    except ValueError:
        return "deadline must be a valid ISO 8601 date string"
    origin, destination = by_id.get(body["originAsset"]), by_id.get(body["destinationAsset"])
    if origin is None or destination is None:
        return "tokenIn or tokenOut is not supported"
    if body["swapType"] not in ("EXACT_OUTPUT", "EXACT_INPUT"):
        return "this test server only quotes EXACT_OUTPUT and EXACT_INPUT"
    for name, kind_name, chain_kind, chain in (("refundTo", "refundType", "ORIGIN_CHAIN", origin[1]),
                                               ("recipient", "recipientType", "DESTINATION_CHAIN", destination[1])):
        if body[name] == "":
            return f"{name} should not be empty"
        expected_chain = chain if body[kind_name] == chain_kind else "near"
        if not valid_address(expected_chain, body[name]):
            return f"{name} is not a valid address for {body[kind_name]} on {expected_chain}"
    if body["depositType"] == "ORIGIN_CHAIN" and origin[1] in MEMO_CHAINS and body.get("depositMode") != "MEMO":
        return f"depositMode MEMO is required for deposits on {origin[1]}"
    return _app_fees_problem(body.get("appFees", []))


def _app_fees_problem(app_fees: Any) -> str | None:
    """`appFees`: [{recipient: a NEAR account, fee: basis points}], as the published definitions say."""
    if not isinstance(app_fees, list):
        return "appFees must be an array"
    for fee in app_fees:
        if not isinstance(fee, dict) or set(fee) != {"recipient", "fee"}:
            return "each value in appFees must be an object with recipient and fee"
        if not valid_address("near", fee["recipient"]):
            return "appFees.recipient must be a NEAR account"
        if isinstance(fee["fee"], bool) or not isinstance(fee["fee"], int) or not 0 < fee["fee"] < 10000:
            return "appFees.fee must be a positive integer of basis points"
    return None


def format_deadline(value: dt.datetime) -> str:
    return value.astimezone(dt.timezone.utc).replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"


def _digest(body: Any) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
