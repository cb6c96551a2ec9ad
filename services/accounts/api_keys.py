"""API keys: issue, authenticate, revoke. Keys are stored only as SHA-256 digests (docs/api.md#identifiers-and-secrets, docs/api.md#authentication-and-scopes)."""
from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import secrets
import time

import redis as redis_lib

from core.errors import BadRequest, NotFound
from core.ids import new_public_id
from core.platforms import PLATFORMS, platform_scopes
from infra import queues
from models.stores import ApiKey, Store

KEY_PREFIX = "sk_live_"
KINDS = ("standard", "bootstrap", "integration")
OPERATOR_KINDS = ("standard", "bootstrap")   # what `keys create` issues; integration keys come from connect
BOOTSTRAP_LIFETIME = dt.timedelta(hours=24)
# A connect whose response was lost may be retried with its spent bootstrap key for this long
# (docs/retries.md), and only while the credentials it issued are unused: the same site and
# webhook reconnect, any other use stays refused.
CONNECT_RETRY_WINDOW = dt.timedelta(minutes=15)

MERCHANT_SCOPES = (
    "invoices:write", "invoices:read", "invoices:create", "transactions:read",
    "payment_links:write", "payment_links:read", "webhooks:read", "webhooks:write", "events:read",
    "refunds:write", "refunds:read", "settings:read", "settings:write",
)
# The store's own settings (its notification mail): standard keys only, never a storefront's.
STORE_SETTINGS_SCOPES = frozenset({"settings:read", "settings:write"})
PLATFORM_SCOPES = frozenset().union(*(platform_scopes(p) for p in PLATFORMS))
KNOWN_SCOPES = frozenset(MERCHANT_SCOPES) | PLATFORM_SCOPES


def default_scopes(kind: str, platform: str = PLATFORMS[0]) -> tuple[str, ...]:
    if kind == "standard":
        return MERCHANT_SCOPES
    if kind == "bootstrap":
        return (f"{platform}:connect", f"{platform}:status")
    # Refunds: of the installation's own invoices only (services/engine/refunds.py).
    return ("invoices:create", "invoices:read", "transactions:read", "refunds:write", "refunds:read") \
        + platform_scopes(platform)


# What each kind of key may ever hold. Platform scopes belong to the keys a storefront is given:
# a bootstrap key holds only its fixed connect/status pair, and disconnect only dedicated
# integration keys; a standard key holds none of them (docs/security.md).
KIND_SCOPES = {
    "standard": frozenset(MERCHANT_SCOPES),
    "bootstrap": frozenset().union(*(default_scopes("bootstrap", p) for p in PLATFORMS)),
    "integration": KNOWN_SCOPES - STORE_SETTINGS_SCOPES,
}


def digest(raw_key: str) -> str:
    return hashlib.sha256(raw_key.encode("utf-8")).hexdigest()


def mask(raw_key: str) -> str:
    """How a key may appear in logs and messages: prefix and last four only."""
    return f"{KEY_PREFIX}…{raw_key[-4:]}"


def issue_key(store: Store, *, kind: str, now: dt.datetime, scopes=None,
              issued_by: ApiKey | None = None) -> tuple[ApiKey, str]:
    """Create a key and return it with the raw secret, which is never stored or shown again.
    `issued_by`: the bootstrap key whose connect issues this integration key."""
    if kind not in KINDS:
        raise BadRequest("validation_error", f"kind: must be one of {', '.join(KINDS)}", param="kind")
    scopes = tuple(scopes) if scopes else default_scopes(kind)
    unknown = sorted(set(scopes) - KNOWN_SCOPES)
    if unknown:
        raise BadRequest("validation_error", f"scopes: unknown scope {unknown[0]!r}", param="scopes")
    misplaced = sorted(set(scopes) - KIND_SCOPES[kind])
    if misplaced:
        raise BadRequest("validation_error", f"scopes: a {kind} key cannot hold {misplaced[0]!r}; "
                         f"{_who_holds(misplaced[0])}", param="scopes")
    raw = KEY_PREFIX + secrets.token_hex(20)
    key = ApiKey.create(
        id=new_public_id("key_"),
        store=store,
        kind=kind,
        digest=digest(raw),
        last4=raw[-4:],
        scopes=" ".join(scopes),
        created_at=now,
        expires_at=now + BOOTSTRAP_LIFETIME if kind == "bootstrap" else None,
        issued_by=issued_by.id if issued_by is not None and issued_by.kind == "bootstrap" else None,
    )
    return key, raw


# Key lookups are cached per process for at most this long, so a key revoked by any process stops
# working everywhere within a second (docs/security.md); this process forgets at once.
KEY_CACHE_SECONDS = 1.0
KEY_CACHE_SIZE = 10_000
_key_cache: dict[str, tuple[float, dict, dict]] = {}


def authenticate(raw_key: str, *, now: dt.datetime, connect_retry: bool = False) -> ApiKey | None:
    """The live key for `raw_key`, with its store, in one indexed query (or from the short
    per-process cache); None if unusable.
    `connect_retry`: a bootstrap key spent less than CONNECT_RETRY_WINDOW ago is usable too (connect
    then checks that the retry is for the same site)."""
    if not raw_key.startswith(KEY_PREFIX) or len(raw_key) > 128:
        return None
    wanted = digest(raw_key)
    key = _cached_key(wanted)
    if key is None:
        key = ApiKey.select(ApiKey, Store).join(Store).where(ApiKey.digest == wanted).first()
        # The digest is the index key; comparing it again in constant time keeps a timing
        # difference in the index lookup from telling anything about near-miss keys.
        if key is None or not hmac.compare_digest(key.digest, wanted):
            return None
        _remember_key(key)
    if key.revoked_at is not None:
        return None
    if key.consumed_at is not None:
        return key if connect_retry and in_connect_retry_window(key, now=now) else None
    if key.expires_at is not None and key.expires_at <= now:
        return None
    if key.kind == "integration" and key.first_used_at is None and not _mark_first_use(key, now=now):
        return None
    note_use(key, now=now)
    return key


# "Last used" is kept to the minute (docs/decisions.md): authenticating writes the key's row at
# most once a minute, never on every request.
LAST_USED_PRECISION = dt.timedelta(minutes=1)
_LAST_USED_GATE = "tender:api_key:last_used:"
_gate_while_redis_is_down: dict[str, float] = {}     # key id -> monotonic time this process may write again


def note_use(key: ApiKey, *, now: dt.datetime) -> None:
    """Record that `key` authenticated a request at `now`, to the minute. The row as read (or
    cached) says when this minute is already recorded: then nothing more is asked of anyone. Else
    one process claims the minute in Redis (SET NX EX) and writes one UPDATE; the others skip."""
    if key.last_used_at is not None and now - key.last_used_at < LAST_USED_PRECISION:
        return
    if not _claim_minute(key.id):
        return
    # Never backwards: a process whose clock lags must not replace a later time.
    ApiKey.update(last_used_at=now).where(
        (ApiKey.id == key.id) & (ApiKey.last_used_at.is_null() | (ApiKey.last_used_at < now))).execute()
    key.last_used_at = now
    cached = _key_cache.get(key.digest)
    if cached is not None:
        cached[1]["last_used_at"] = now      # in place: the entry keeps its expiry (revocations)


def _claim_minute(key_id: str) -> bool:
    seconds = int(LAST_USED_PRECISION.total_seconds())
    try:
        return bool(queues.redis().set(_LAST_USED_GATE + key_id, b"1", nx=True, ex=seconds))
    except (redis_lib.RedisError, OSError):
        # Fail open: the request is authenticated all the same, and each process gates its own
        # writes meanwhile (one a minute per key and process, not one per request).
        now = time.monotonic()
        if _gate_while_redis_is_down.get(key_id, 0.0) > now:
            return False
        if len(_gate_while_redis_is_down) >= KEY_CACHE_SIZE:
            _gate_while_redis_is_down.clear()
        _gate_while_redis_is_down[key_id] = now + seconds
        return True


def _mark_first_use(key: ApiKey, *, now: dt.datetime) -> bool:
    """Record an integration key's first request (once per key: later ones see it set). It ends
    the lost-response retry of the connect that issued it, so the two are decided by one row: a
    retry revokes the key only while this is unset, and this is set only while it is not revoked.
    False when a retry revoked it first."""
    marked = ApiKey.update(first_used_at=now, last_used_at=now).where(
        (ApiKey.id == key.id) & ApiKey.first_used_at.is_null() & ApiKey.revoked_at.is_null()).execute()
    if not marked:
        current = ApiKey.get_or_none(ApiKey.id == key.id)
        if current is None or current.revoked_at is not None:
            forget_cached_keys()
            return False
        now = current.first_used_at
        key.last_used_at = current.last_used_at
    else:
        key.last_used_at = now
    key.first_used_at = now
    _remember_key(key)
    return True


def revoke_unused(key_id: str, *, now: dt.datetime) -> bool:
    """Revoke an integration key that has never been used; False if it has been (or is revoked)."""
    forget_cached_keys()
    return ApiKey.update(revoked_at=now).where(
        (ApiKey.id == key_id) & ApiKey.first_used_at.is_null() & ApiKey.revoked_at.is_null()).execute() > 0


def in_connect_retry_window(key: ApiKey, *, now: dt.datetime) -> bool:
    return key.kind == "bootstrap" and key.consumed_at is not None and now - key.consumed_at <= CONNECT_RETRY_WINDOW


def granted_scopes(key: ApiKey) -> frozenset:
    """A stored scope we no longer know (e.g. the retired payments:read) grants nothing, nor does
    one the key's kind may not hold (a standard key issued with woocommerce:disconnect before the
    CLI refused it)."""
    return key.scope_set & KIND_SCOPES.get(key.kind, frozenset())


def refused_scope_message(key: ApiKey, scope: str) -> str:
    """The 403's words: a key that holds the scope in name only is told why it does not count."""
    if scope in key.scope_set and scope in KNOWN_SCOPES:
        return f"A {key.kind} API key cannot use the scope {scope}: {_who_holds(scope)}"
    return f"This API key lacks the scope {scope}."


def _who_holds(scope: str) -> str:
    if scope in KIND_SCOPES["bootstrap"]:
        return "it belongs to bootstrap keys and the dedicated integration keys connect issues."
    if scope in PLATFORM_SCOPES:
        return "it belongs to the dedicated integration keys connect issues."
    return "it belongs to standard and integration keys."


def _cached_key(wanted: str) -> ApiKey | None:
    entry = _key_cache.get(wanted)
    if entry is None or entry[0] < time.monotonic():
        return None
    # A fresh instance per request: a handler may change its key or store object.
    key = ApiKey(**entry[1])
    key.store = Store(**entry[2])
    return key


def _remember_key(key: ApiKey) -> None:
    if key.kind == "bootstrap":
        return            # single-use: its consumption must be seen at once by every process
    if len(_key_cache) >= KEY_CACHE_SIZE:
        _key_cache.clear()
    _key_cache[key.digest] = (time.monotonic() + KEY_CACHE_SECONDS, dict(key.__data__), dict(key.store.__data__))


def forget_cached_keys() -> None:
    """Called when this process revokes keys: no wait for the cache to run out here."""
    _key_cache.clear()


def revoke(key_id: str, *, now: dt.datetime, store: Store | None = None) -> bool:
    """Revoke a key (given `store`: only one of that store's; another store's is not found)."""
    forget_cached_keys()
    which = (ApiKey.id == key_id) & ((ApiKey.store == store.id) if store is not None else True)
    updated = ApiKey.update(revoked_at=now).where(which & ApiKey.revoked_at.is_null()).execute()
    if not updated and not ApiKey.select().where(which).exists():
        raise NotFound("api_key_not_found", f"No API key {key_id!r}.")
    return bool(updated)


def list_for_store(store: Store) -> list[ApiKey]:
    """The store's keys, newest first, revoked ones included (the dashboard shows them struck)."""
    return list(ApiKey.select().where(ApiKey.store == store.id).order_by(ApiKey.created_at.desc()).limit(200))


def revoke_store_keys(store: Store, *, kind: str, now: dt.datetime) -> int:
    forget_cached_keys()
    return (ApiKey.update(revoked_at=now)
            .where((ApiKey.store == store) & (ApiKey.kind == kind) & ApiKey.revoked_at.is_null())
            .execute())
