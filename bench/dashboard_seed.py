"""The rows of bench/dashboard_pages.py, written in bulk SQL around the application (one
INSERT … SELECT generate_series per table): a store with N invoices as a busy merchant has them,
and a second store beside it.

Invoice i (1 = the newest) is created i x 6 s before now (1,000,000 span 69 days). By i mod 20:
12 in 20 paid (two minutes after creation) and settled (one settlement transaction each), 4 expired,
1 cancelled, 1 pending, 1 awaiting payment, 1 underpaid. One invoice in 10 came from one of 1,000
payment links. Every invoice has its event (`invoice.created`, or `invoice.paid` when paid); the
newest `deliveries` events went to the store's first webhook endpoint, each with one attempt. One
paid invoice in 50 has a refund (the newest 200 of them still awaiting funds). The statement's
daily roll-up is then summed from these rows by `flask statement rebuild`, as an operator would.
"""
from __future__ import annotations

import subprocess
import time

from bench import stack

_AGE = "now() AT TIME ZONE 'utc' - i * interval '6 seconds'"
_STATUS = """CASE WHEN i %% 20 < 12 THEN 'paid' WHEN i %% 20 < 16 THEN 'expired' WHEN i %% 20 = 16 THEN 'cancelled'
                  WHEN i %% 20 = 17 THEN 'pending' WHEN i %% 20 = 18 THEN 'awaiting_payment' ELSE 'underpaid' END"""
_PAID = "i %% 20 < 12"


def _tag(store_tag: str, what: str) -> str:
    """A per-store, per-row md5 seed, so two stores' rows never share an id."""
    return f"md5('{store_tag}{what}' || i)"


def invoices(url: str, store_id: str, count: int, tag: str) -> None:
    stack.sql(url, f"""
        INSERT INTO invoice (id, public_id, store_id, status, amount, currency, order_amount, order_currency,
                             output_asset, external_order_id, payment_link_id, metadata, expires_at, created_at,
                             updated_at, paid_at, paid_amount, received_amount, difference_amount, swap_status,
                             settled_at, transaction_hash, deposit_address)
        SELECT {_tag(tag, 'inv')}::uuid, 'inv_' || {_tag(tag, 'inv')}, %s, {_STATUS}, 25, 'USD', 25, 'USD',
               'usdc.near', 'order-' || i,
               CASE WHEN i %% 10 = 5 THEN 'plink_' || md5('{tag}link' || (i / 10 %% 1000)) END,
               '{{"cart":"42"}}', {_AGE} + interval '30 minutes', {_AGE}, {_AGE},
               CASE WHEN {_PAID} THEN {_AGE} + interval '2 minutes' END,
               CASE WHEN {_PAID} THEN 25 END, CASE WHEN {_PAID} THEN 24.87 END,
               CASE WHEN {_PAID} THEN -0.13 END, CASE WHEN {_PAID} THEN 'success' END,
               CASE WHEN {_PAID} THEN {_AGE} + interval '5 minutes' END,
               CASE WHEN {_PAID} THEN '0x' || {_tag(tag, 'hash')} END,
               CASE WHEN i %% 20 NOT IN (16, 17) THEN 'dep-' || {_tag(tag, 'dep')} END
        FROM generate_series(1, %s) AS i""", store_id, count)


def payment_links(url: str, store_id: str, tag: str, count: int = 1000) -> None:
    stack.sql(url, f"""
        INSERT INTO payment_link (id, public_id, plpub_id, store_id, title, amount_mode, amount, currency,
                                  allow_multiple_payments, public_visible, status, created_at, updated_at)
        SELECT md5('{tag}linkid' || i)::uuid, 'plink_' || md5('{tag}link' || i), 'plpub_' || md5('{tag}plpub' || i),
               %s, 'Link ' || i, 'fixed_amount', 25, 'USD', true, true,
               CASE WHEN i %% 7 = 0 THEN 'inactive' ELSE 'active' END, {_AGE.replace('6 seconds', '1 hour')},
               {_AGE.replace('6 seconds', '1 hour')}
        FROM generate_series(0, %s) AS i""", store_id, count - 1)


def events(url: str, store_id: str, tag: str) -> None:
    """One event per invoice, its payload the shape of a real one (id, type, the invoice's fields)."""
    stack.sql(url, f"""
        INSERT INTO event (id, public_id, store_id, invoice_id, type, payload, created_at, dispatched_at)
        SELECT md5('{tag}evt' || public_id)::uuid, 'evt_' || md5('{tag}evt' || public_id), store_id, id, type,
               json_build_object('id', 'evt_' || md5('{tag}evt' || public_id), 'type', type,
                                 'data', json_build_object('id', public_id, 'status', status, 'amount', '25.00',
                                                           'currency', currency,
                                                           'external_order_id', external_order_id))::text,
               at, at
        FROM (SELECT *, CASE WHEN status = 'paid' THEN 'invoice.paid' ELSE 'invoice.created' END AS type,
                     coalesce(paid_at, created_at) AS at
              FROM invoice WHERE store_id = %s) AS rows""", store_id)


def settlements(url: str, store_id: str, tag: str) -> None:
    stack.sql(url, f"""
        INSERT INTO "transaction" (id, public_id, store_id, invoice_id, type, network, token, amount, transaction_hash,
                                   to_wallet, status, verified, confirmed_at, created_at, updated_at)
        SELECT md5('{tag}settle' || id)::uuid, 'txn_' || md5('{tag}settle' || id), store_id, id, 'settlement',
               'near', 'usdc.near', 24.87, '0xpayout' || md5(id::text), 'bench.near', 'confirmed', true,
               settled_at, settled_at, settled_at
        FROM invoice WHERE store_id = %s AND status = 'paid'""", store_id)


def webhooks(url: str, store_id: str, tag: str, deliveries: int) -> None:
    """Three endpoints (the third failing for an hour); the newest `deliveries` events sent to the first."""
    stack.sql(url, f"""
        INSERT INTO webhook_endpoint (id, public_id, store_id, name, url, events, secret, enabled, failing_since,
                                      created_at, updated_at)
        SELECT md5('{tag}wh' || i)::uuid, 'wh_' || md5('{tag}wh' || i), %s, 'Endpoint ' || i,
               'https://shop.example/hooks/' || i, '["*"]', 'whsec_' || md5('{tag}secret' || i), true,
               CASE WHEN i = 3 THEN now() AT TIME ZONE 'utc' - interval '1 hour' END,
               now() AT TIME ZONE 'utc' - interval '90 days', now() AT TIME ZONE 'utc' - interval '90 days'
        FROM generate_series(1, 3) AS i""", store_id)
    stack.sql(url, f"""
        INSERT INTO webhook_delivery (id, public_id, store_id, event_id, endpoint_id, target_key, url, status,
                                      attempts, last_attempt_at, last_status_code, last_latency_ms,
                                      last_response_excerpt, succeeded_at, created_at, updated_at)
        SELECT md5('{tag}whd' || e.id)::uuid, 'whd_' || md5('{tag}whd' || e.id), e.store_id, e.id,
               md5('{tag}wh1')::uuid, 'wh_' || md5('{tag}wh1'), 'https://shop.example/hooks/1', 'succeeded', 1,
               e.created_at, 200, 42, 'ok', e.created_at, e.created_at, e.created_at
        FROM (SELECT id, store_id, created_at FROM event WHERE store_id = %s
              ORDER BY created_at DESC LIMIT %s) AS e""", store_id, deliveries)
    stack.sql(url, """
        INSERT INTO webhook_attempt (id, delivery_id, number, outcome, started_at, status_code, latency_ms,
                                     response_excerpt)
        SELECT md5('attempt' || id)::uuid, id, 1, 'succeeded', created_at, 200, 42, 'ok'
        FROM webhook_delivery WHERE store_id = %s""", store_id)


def refunds(url: str, store_id: str, tag: str) -> None:
    """One paid invoice in 50 refunded in full; the newest 200 refunds still wait for the merchant's funds."""
    stack.sql(url, f"""
        INSERT INTO refund (id, public_id, store_id, invoice_id, status, amount, currency, asset, refund_to,
                            estimated_amount_out, funding_asset, funding_amount, deposit_address, expires_at,
                            quoted_at, completed_at, created_at, updated_at)
        SELECT md5('{tag}ref' || id)::uuid, 'ref_' || md5('{tag}ref' || id), store_id, id,
               CASE WHEN rank <= 200 THEN 'awaiting_funds' ELSE 'succeeded' END, 25, 'USD', 'usdc.near',
               'buyer.near', 24.9, 'usdc.near', 25, 'refund-dep-' || md5(id::text),
               paid_at + interval '1 day', paid_at + interval '1 hour',
               CASE WHEN rank > 200 THEN paid_at + interval '2 hours' END,
               paid_at + interval '1 hour', paid_at + interval '1 hour'
        FROM (SELECT id, store_id, paid_at, row_number() OVER (ORDER BY created_at DESC) AS rank
              FROM invoice WHERE store_id = %s AND status = 'paid'
                AND ('x' || substr(public_id, 5, 8))::bit(32)::int %% 50 = 0) AS paid""", store_id)


def audit(url: str, store_id: str, count: int) -> None:
    stack.sql(url, """
        INSERT INTO audit_entry (store_id, actor, action, target, detail, address, created_at)
        SELECT %s, 'owner@example.com', 'payment_link.update', 'plink_' || md5('audit' || i), 'Link ' || i,
               '127.0.0.1', now() AT TIME ZONE 'utc' - (%s - i) * interval '1 minute'
        FROM generate_series(1, %s) AS i""", store_id, count, count)


def rebuild_statement_days(environment: dict) -> None:
    """The roll-up summed from the rows above by the application's own rules."""
    [(first, last)] = stack.sql(environment["DATABASE_URL"],
                                "SELECT MIN(created_at)::date, MAX(created_at)::date + 1 FROM invoice")
    subprocess.run([str(stack.BIN / "flask"), "--app", "wsgi", "statement", "rebuild", "--from", str(first),
                    "--to", str(last)], cwd=stack.ROOT, env=environment, check=True, capture_output=True, text=True)


def store(url: str, environment: dict, store_id: str, *, tag: str, invoices_count: int, deliveries: int,
          audit_entries: int) -> dict:
    """Every row of one store; the seconds each step took."""
    steps = (("invoices", lambda: invoices(url, store_id, invoices_count, tag)),
             ("payment links", lambda: payment_links(url, store_id, tag)),
             ("events", lambda: events(url, store_id, tag)),
             ("settlements", lambda: settlements(url, store_id, tag)),
             ("webhooks", lambda: webhooks(url, store_id, tag, deliveries)),
             ("refunds", lambda: refunds(url, store_id, tag)),
             ("audit", lambda: audit(url, store_id, audit_entries)))
    took = {}
    for name, step in steps:
        began = time.perf_counter()
        step()
        took[name] = time.perf_counter() - began
    return took


def finish(url: str, environment: dict) -> dict:
    began = time.perf_counter()
    rebuild_statement_days(environment)
    rebuilt = time.perf_counter() - began
    began = time.perf_counter()
    stack.vacuum_analyze(url)
    return {"statement rebuild": rebuilt, "vacuum analyze": time.perf_counter() - began}
