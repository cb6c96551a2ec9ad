"""Operator commands (`flask --app wsgi …`). Their JSON output is a contract (docs/api.md#authentication-and-scopes)."""
from __future__ import annotations

import json
import os
import sys

import click
from flask import current_app
from flask.cli import AppGroup
from playhouse.migrations import Runner

from core.clock import utcnow
from core.errors import DomainError
from models.base import db, make_database
from models.stores import Store
from models.people import ROLES
from services.accounts import api_keys, audit, people, stores

MIGRATIONS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "migrations")
DEMO_STORE_NAME = "Demo store"

db_cli = AppGroup("db", help="Database schema.")
stores_cli = AppGroup("stores", help="Create and configure stores.")
keys_cli = AppGroup("keys", help="Issue and revoke API keys.")
invoices_cli = AppGroup("invoices", help="Inspect invoices (operators).")
refunds_cli = AppGroup("refunds", help="Inspect merchant refunds (operators).")
export_cli = AppGroup("export", help="Export a store's invoices or transactions (docs/exports.md).")
statement_cli = AppGroup("statement", help="The settlement statement's daily roll-up (docs/exports.md).")
mail_cli = AppGroup("mail", help="The mail outbox (docs/email.md).")
users_cli = AppGroup("users", help="People of the merchant dashboard (docs/dashboard.md).")
rates_cli = AppGroup("rates", help="Exchange rates invoices are fixed at (docs/currencies.md).")


def _emit(as_json: bool, payload: dict, text: str) -> None:
    click.echo(json.dumps(payload) if as_json else text)


def _domain_errors(fn):
    """Show a DomainError as a one-line CLI error (exit 1) rather than a traceback."""
    from functools import wraps

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            with db.connection_context():
                return fn(*args, **kwargs)
        except DomainError as error:
            raise click.ClickException(error.message) from None
    return wrapper


def migrate(direct_url: str | None = None) -> list[str]:
    """Apply pending migrations, over the app's database or, given `direct_url`, over a connection
    of its own to PostgreSQL itself (DATABASE_DIRECT_URL: not through PgBouncer, docs/operations.md)."""
    database = make_database(direct_url, max_connections=1) if direct_url else db.obj
    try:
        with database.connection_context():
            return Runner(database, directory=MIGRATIONS_DIR).up()
    finally:
        if direct_url:
            database.close_all()


@db_cli.command("upgrade", help="Apply pending schema migrations (over DATABASE_DIRECT_URL when set).")
def db_upgrade():
    applied = migrate(current_app.extensions["tender.settings"].database_direct_url)
    click.echo("applied: " + ", ".join(applied) if applied else "schema is up to date")


@stores_cli.command("create")
@click.option("--name", required=True)
@click.option("--payout-wallet", default=None)
@click.option("--output-asset", default="usdc.near", show_default=True)
@click.option("--json", "as_json", is_flag=True)
@_domain_errors
def stores_create(name, payout_wallet, output_asset, as_json):
    now = utcnow()
    with db.atomic():
        store = stores.create_store(name=name, payout_wallet=payout_wallet, output_asset=output_asset, now=now,
                                    offered=_offered_assets())
        _key, raw = api_keys.issue_key(store, kind="standard", now=now)
    _emit(as_json, {"store_id": str(store.id), "store_name": store.name, "api_key": raw},
          f"store {store.id} ({store.name})\nAPI key (shown once): {raw}")


@stores_cli.command("set-payout")
@click.option("--store", "store_id", required=True)
@click.option("--wallet", required=True)
@_domain_errors
def stores_set_payout(store_id, wallet):
    store = stores.set_payout_wallet(stores.get_store(store_id), wallet, now=utcnow())
    click.echo(f"store {store.id}: payout wallet set")


@stores_cli.command("set-output-asset", help="The stablecoin a store is paid out in, from its next invoice on "
                                             "(docs/operations.md#a-stores-output-asset).")
@click.option("--store", "store_id", required=True)
@click.option("--asset", required=True)
@click.option("--wallet", default=None, help="A new payout wallet for it, in the same change.")
@_domain_errors
def stores_set_output_asset(store_id, asset, wallet):
    store = stores.set_output_asset(stores.get_store(store_id), asset, offered=_offered_assets(), wallet=wallet,
                                    now=utcnow())
    click.echo(f"store {store.id}: paid out in {store.output_asset}")


def _offered_assets() -> list[str]:
    """The asset codes this deployment's swap provider offers (asked once per command)."""
    import providers
    from services.engine import quotes

    return [asset.code for asset in quotes.supported_assets(providers.shared(_settings()))]


@stores_cli.command("set-fee", help="The operator's fee for one store, in basis points (docs/operations.md#the-operators-fee).")
@click.option("--store", "store_id", required=True)
@click.option("--bps", type=click.IntRange(0, stores.MAX_FEE_BPS), default=None)
@click.option("--default", "use_default", is_flag=True, help="Back to OPERATOR_FEE_BPS.")
@_domain_errors
def stores_set_fee(store_id, bps, use_default):
    if (bps is None) == (not use_default):
        raise click.UsageError("give either --bps N or --default")
    settings = _settings()
    if bps and not settings.operator_fee_account:
        raise click.ClickException("OPERATOR_FEE_ACCOUNT is not set: a fee needs the account it is paid to")
    store = stores.set_fee(stores.get_store(store_id), bps, now=utcnow())
    effective = settings.operator_fee_bps if store.fee_bps is None else store.fee_bps
    click.echo(f"store {store.id}: fee {effective} bps" + (" (OPERATOR_FEE_BPS)" if store.fee_bps is None else ""))


@stores_cli.command("callback-secret", help="Show the secret that signs legacy callback_url deliveries.")
@click.option("--store", "store_id", required=True)
@_domain_errors
def stores_callback_secret(store_id):
    click.echo(stores.get_store(store_id).callback_secret)


@keys_cli.command("create")
@click.option("--store", "store_id", required=True)
# Integration keys come only from connect, bound to their installation; an operator issues the other two.
@click.option("--kind", type=click.Choice(api_keys.OPERATOR_KINDS), default="standard", show_default=True)
@click.option("--scopes", default=None, help="Comma-separated; default: the kind's scopes.")
@click.option("--json", "as_json", is_flag=True)
@_domain_errors
def keys_create(store_id, kind, scopes, as_json):
    scope_list = [s.strip() for s in scopes.split(",") if s.strip()] if scopes else None
    key, raw = api_keys.issue_key(stores.get_store(store_id), kind=kind, scopes=scope_list, now=utcnow())
    _emit(as_json, {"id": key.id, "api_key": raw, "kind": key.kind, "scopes": key.scopes.split()},
          f"key {key.id} ({key.kind}: {key.scopes})\nAPI key (shown once): {raw}")


@keys_cli.command("revoke")
@click.argument("key_id")
@_domain_errors
def keys_revoke(key_id):
    api_keys.revoke(key_id, now=utcnow())
    click.echo(f"key {key_id} revoked")


@click.command("demo", help="Ensure a demo store exists; print its key the first time.")
@click.option("--url", default=None, help="Where Tender listens, said first (make run).")
@_domain_errors
def demo(url):
    if url:
        click.echo(f"Tender: {url}  (API reference: {url}/docs; a tour with curl: docs/tour.md)")
    store = Store.get_or_none(Store.name == DEMO_STORE_NAME)
    if store is not None:
        click.echo(f"Demo store {store.id} exists. A new key: "
                   f"flask --app wsgi keys create --store {store.id}")
        return
    now = utcnow()
    with db.atomic():
        store = stores.create_store(name=DEMO_STORE_NAME, payout_wallet="demo-merchant.near", now=now)
        _key, raw = api_keys.issue_key(store, kind="standard", now=now)
    click.echo(f"Demo store {store.id} created.\nAPI key (shown once, keep it): {raw}")


@invoices_cli.command("stuck", help="Paid invoices still converting 1 h after their deadline, or held for review.")
@click.option("--json", "as_json", is_flag=True)
@_domain_errors
def invoices_stuck(as_json):
    from core.clock import isoformat
    from services.engine.payments import stuck

    rows = [{"id": invoice.public_id, "store_id": str(invoice.store_id), "status": invoice.status,
             "swap_status": invoice.swap_status, "provider_status": invoice.provider_status,
             "review_reason": invoice.review_reason, "deposit_address": invoice.deposit_address,
             "provider_ref": invoice.provider_ref, "expires_at": isoformat(invoice.expires_at),
             "paid_at": isoformat(invoice.paid_at)} for invoice in stuck(now=utcnow())]
    if as_json:
        click.echo(json.dumps(rows))
        return
    for row in rows:
        click.echo(f"{row['id']} store={row['store_id']} provider={row['provider_status']} "
                   f"review={row['review_reason'] or '-'} deadline={row['expires_at']} ref={row['provider_ref']}")
    click.echo(f"{len(rows)} stuck invoice(s)")


@refunds_cli.command("stuck", help="Refunds still processing 1 h after their funding deadline, or held for review.")
@click.option("--json", "as_json", is_flag=True)
@_domain_errors
def refunds_stuck(as_json):
    from core.clock import isoformat
    from services.engine.refunds import stuck

    rows = [{"id": refund.public_id, "invoice_id": refund.invoice.public_id, "store_id": str(refund.store_id),
             "status": refund.status, "provider_status": refund.provider_status,
             "review_reason": refund.review_reason, "deposit_address": refund.deposit_address,
             "provider_ref": refund.provider_ref, "expires_at": isoformat(refund.expires_at)}
            for refund in stuck(now=utcnow())]
    if as_json:
        click.echo(json.dumps(rows))
        return
    for row in rows:
        click.echo(f"{row['id']} invoice={row['invoice_id']} status={row['status']} "
                   f"provider={row['provider_status']} review={row['review_reason'] or '-'} "
                   f"deadline={row['expires_at']} ref={row['provider_ref']}")
    click.echo(f"{len(rows)} stuck refund(s)")


def _export_command(kind: str):
    @export_cli.command(kind, help=f"Write the store's {kind} created from --from to --to (inclusive) to stdout.")
    @click.option("--store", "store_id", required=True)
    @click.option("--from", "start", required=True, help="A UTC date (2026-11-01) or ISO 8601 date-time.")
    @click.option("--to", "end", required=True, help="A UTC date (inclusive) or ISO 8601 date-time (exclusive).")
    @click.option("--format", "file_format", type=click.Choice(("csv", "jsonl")), default="csv", show_default=True)
    @_domain_errors
    def command(store_id, start, end, file_format):
        from blueprints.requests import load
        from schemas.exports import InvoiceExportQuerySchema, TransactionExportQuerySchema
        from services.books import exports

        schema = InvoiceExportQuerySchema() if kind == "invoices" else TransactionExportQuerySchema()
        query = load(schema, {"created_after": exports.range_start(start), "created_before": exports.range_end(end),
                              "format": file_format})
        store = stores.get_store(store_id)
        export = (exports.invoice_export if kind == "invoices" else exports.transaction_export)(store, query)
        out = sys.stdout.buffer         # bytes as served: CSV lines end in \r\n, never translated
        for chunk in exports.chunks(export, file_format):
            out.write(chunk)
        out.flush()
    return command


for _kind in ("invoices", "transactions"):
    _export_command(_kind)


@statement_cli.command("rebuild", help="Sum the statement's days from --from to --to (inclusive) again from the "
                                       "invoices and transactions, for rows written around the application.")
@click.option("--from", "start", required=True, type=click.DateTime(("%Y-%m-%d",)), help="A UTC date.")
@click.option("--to", "end", required=True, type=click.DateTime(("%Y-%m-%d",)), help="A UTC date (inclusive).")
@click.option("--store", "store_id", default=None, help="One store's days (default: every store's).")
@_domain_errors
def statement_rebuild(start, end, store_id):
    from services import settlement_days

    store = stores.get_store(store_id) if store_id else None
    written = settlement_days.rebuild(start.date(), end.date(), store_id=store.id if store else None)
    click.echo(f"day rows written: {written}")


@mail_cli.command("outbox", help="The newest mail first: status, attempts and the server's last answer; "
                                 "--show prints one mail as it is sent.")
@click.option("--status", type=click.Choice(("pending", "sent", "failed", "logged")), default=None)
@click.option("--limit", type=click.IntRange(1, 1000), default=50, show_default=True)
@click.option("--show", "show_id", default=None, help="A mail_… id: print its headers and plain text.")
@click.option("--json", "as_json", is_flag=True)
@_domain_errors
def mail_outbox(status, limit, show_id, as_json):
    from services.mail import mail_outbox as outbox

    if show_id:
        shown = outbox.shown(show_id)
        if shown is None:
            raise click.ClickException(f"no mail {show_id}")
        click.echo(shown)
        return
    rows = outbox.listing(limit=limit, status=status)
    if as_json:
        click.echo(json.dumps(rows))
        return
    for row in rows:
        click.echo(f"{row['id']} {row['created_at']} {row['status']} attempts={row['attempts']} {row['kind']} "
                   f"to={row['to']} subject={row['subject']!r} answer={row['last_answer'] or '-'}")
    click.echo(f"{len(rows)} mail(s)")


@users_cli.command("invite", help="Invite someone to a store's dashboard; prints the single-use link (72 h).")
@click.option("--store", "store_id", required=True)
@click.option("--email", required=True)
@click.option("--role", type=click.Choice(ROLES), default="owner", show_default=True)
@click.option("--json", "as_json", is_flag=True)
@_domain_errors
def users_invite(store_id, email, role, as_json):
    now, base_url = utcnow(), current_app.extensions["tender.settings"].public_base_url
    store = stores.get_store(store_id)
    with db.atomic():
        token = people.invite(store, email, role, now=now, base_url=base_url)      # and mailed
        audit.record(store, None, "member.invite", now=now, target=people.normal_email(email), detail=role)
    url = people.invitation_url(base_url, token)
    _emit(as_json, {"invitation_url": url}, f"invitation for {people.normal_email(email)} ({role}), "
          f"valid 72 hours, usable once:\n{url}")


@users_cli.command("reset-link", help="A single-use password-reset link (1 h) for a dashboard user, printed.")
@click.option("--email", required=True)
@click.option("--json", "as_json", is_flag=True)
@_domain_errors
def users_reset_link(email, as_json):
    base_url = current_app.extensions["tender.settings"].public_base_url
    started = people.start_reset(email, now=utcnow())          # printed for the operator, not mailed
    if started is None:
        raise click.ClickException(f"no dashboard user {email!r} with a password")
    url = people.reset_url(base_url, started[1])
    _emit(as_json, {"password_reset_url": url}, f"password reset for {started[0].email}, valid 1 hour, usable once:\n{url}")


@mail_cli.command("retry", help="Send failed mail again (after fixing what the SMTP server refused).")
@click.argument("mail_ids", nargs=-1, required=True)
@_domain_errors
def mail_retry(mail_ids):
    from services.mail import mail_outbox as outbox

    click.echo(f"{outbox.retry_failed(list(mail_ids), now=utcnow())} mail(s) queued again")


def _settings():
    return current_app.extensions["tender.settings"]


@rates_cli.command("set", help="Set the sandbox's rate: 1 CURRENCY = RATE US dollars (`none`: no rate).")
@click.argument("currency")
@click.argument("rate")
@_domain_errors
def rates_set(currency, rate):
    from core import currencies, money
    from services.engine import exchange_rates

    if exchange_rates.SANDBOX not in _settings().fx_providers:
        raise click.ClickException("FX_PROVIDER is not sandbox: rates come from " +
                                   (", ".join(_settings().fx_providers) or "nowhere (only USD is supported)"))
    code = currency.strip().upper()
    if not currencies.is_currency(code) or code == "USD":
        raise click.ClickException(f"{currency!r} is not an ISO 4217 currency other than USD")
    try:
        value = None if rate.strip().lower() == "none" else money.parse_crypto(rate.strip())
    except ValueError as error:
        raise click.ClickException(f"rate {error} (or none)") from None
    exchange_rates.set_sandbox_rate(code, value, now=utcnow())
    click.echo(f"1 {code} = {value} USD from the next commit" if value is not None else f"{code}: no rate")


@rates_cli.command("show", help="The stored rates, and the rate each supported currency would be fixed at now.")
@_domain_errors
def rates_show():
    from core.errors import Unavailable
    from services.engine import exchange_rates

    settings, now = _settings(), utcnow()
    policy = exchange_rates.RatePolicy.of(settings)
    click.echo(f"sources: {', '.join(policy.sources) or 'none (only USD)'}")
    for row in exchange_rates.stored_rates():
        click.echo(f"  {row.source:17} {row.currency} {row.rate.normalize():f} as of {row.as_of:%Y-%m-%dT%H:%M:%SZ}")
    for currency in settings.supported_currencies:
        try:
            rate, source = exchange_rates.usd_value(currency, policy, now=now)
            click.echo(f"{currency}: {rate.normalize():f} USD ({source})")
        except Unavailable:
            click.echo(f"{currency}: unavailable")


@rates_cli.command("refresh", help="Ask the real rate sources now (the scheduler does it every hour).")
@_domain_errors
def rates_refresh():
    from services.engine import exchange_rates

    outcomes = exchange_rates.refresh(_settings(), now=utcnow())
    click.echo(", ".join(f"{name}: {outcome}" for name, outcome in outcomes.items()) or "no real rate source")


def register_commands(app) -> None:
    for command in (db_cli, stores_cli, keys_cli, invoices_cli, refunds_cli, export_cli, statement_cli, mail_cli, users_cli,
                    rates_cli, demo):
        app.cli.add_command(command)
