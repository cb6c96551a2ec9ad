"""The upgrade that moves poll state off the invoice and refund rows (migrations/0013_poll_state.py)
keeps every schedule and claim a poller could still act on, on SQLite and (with TEST_DATABASE_URL)
PostgreSQL.

It runs the migrations up to the one before, writes invoices as the old schema had them, then
upgrades: on a SQLite file of its own, or in a schema of its own in the test database."""
import datetime as dt
import os
import uuid

import peewee as pw
from playhouse.migrations import Runner
import pytest

from cli import MIGRATIONS_DIR
from tests.support.databases import postgres_in_schema

NOW = dt.datetime(2030, 1, 1, 12, 0, 0)
SCHEMA = "poll_state_upgrade"


def _databases(tmp_path):
    yield "sqlite", pw.SqliteDatabase(str(tmp_path / "upgrade.db"), pragmas={"foreign_keys": 1}), None
    database = postgres_in_schema(SCHEMA)
    if database is not None:
        yield "postgresql", database, SCHEMA


def _insert_invoice(database, store_id, **columns):
    values = dict(id=uuid.uuid4().hex, public_id="inv_" + uuid.uuid4().hex, store_id=store_id, amount="10",
                  currency="USD", order_amount="10", order_currency="USD", output_asset="usdc.near",
                  expires_at=NOW, created_at=NOW, updated_at=NOW, **columns)
    names = ", ".join(values)
    marks = ", ".join(["%s" if isinstance(database, pw.PostgresqlDatabase) else "?"] * len(values))
    database.execute_sql(f"INSERT INTO invoice ({names}) VALUES ({marks})", list(values.values()))
    return values["id"]


def _insert_refund(database, store_id, invoice_id, **columns):
    values = dict(id=uuid.uuid4().hex, public_id="ref_" + uuid.uuid4().hex, store_id=store_id, invoice_id=invoice_id,
                  amount="5", currency="USD", asset="usdc.eth", refund_to="0xbuyer", estimated_amount_out="5",
                  funding_asset="usdc.near", funding_amount="5.1", deposit_address="r", expires_at=NOW,
                  quoted_at=NOW, created_at=NOW, updated_at=NOW, **columns)
    names = ", ".join(values)
    marks = ", ".join(["%s" if isinstance(database, pw.PostgresqlDatabase) else "?"] * len(values))
    database.execute_sql(f"INSERT INTO refund ({names}) VALUES ({marks})", list(values.values()))
    return values["id"]


def test_the_upgrade_moves_every_claimable_schedule_and_claim_off_the_invoice(tmp_path):
    previous = sorted(name for name in os.listdir(MIGRATIONS_DIR) if name[:4].isdigit() and name < "0013")[-1][:-3]
    for backend, database, schema in _databases(tmp_path):
        try:
            database.connect(reuse_if_open=True)
            runner = Runner(database, directory=MIGRATIONS_DIR, schema=schema)
            runner.up(target=previous)
            store_id = uuid.uuid4().hex
            database.execute_sql(
                "INSERT INTO store (id, name, output_asset, callback_secret, created_at, updated_at) VALUES "
                + ("(%s, %s, %s, %s, %s, %s)" if backend == "postgresql" else "(?, ?, ?, ?, ?, ?)"),
                [store_id, "Upgrade", "usdc.near", "s" * 32, NOW, NOW])
            due = NOW + dt.timedelta(seconds=30)
            lease = NOW + dt.timedelta(seconds=60)
            watched = _insert_invoice(database, store_id, status="awaiting_payment", deposit_address="a",
                                      next_poll_at=due, claimed_until=lease, claim_token="t" * 32)
            converting = _insert_invoice(database, store_id, status="paid", swap_status="processing",
                                         deposit_address="b", next_poll_at=due)
            finished = _insert_invoice(database, store_id, status="refunded", deposit_address="c", next_poll_at=due)
            idle = _insert_invoice(database, store_id, status="pending")
            funding = _insert_refund(database, store_id, converting, status="awaiting_funds", next_poll_at=due)
            done = _insert_refund(database, store_id, converting, status="succeeded", next_poll_at=due)
            runner.up()
            rows = {str(uuid.UUID(str(row[0]))): row[1:] for row in database.execute_sql(
                "SELECT id, phase, next_poll_at, watch_until, claimed_until, claim_token FROM poll_state")}
            parse = pw.DateTimeField().python_value
            as_read = {key: (phase, parse(at), parse(until), parse(claimed), token)
                       for key, (phase, at, until, claimed, token) in rows.items()}
            assert as_read == {
                str(uuid.UUID(watched)): ("chain", due, NOW + dt.timedelta(hours=24), lease, "t" * 32),
                str(uuid.UUID(converting)): ("settlement", due, NOW + dt.timedelta(hours=24), None, None),
                str(uuid.UUID(funding)): ("refunds", due, NOW + dt.timedelta(hours=24), None, None),
            }, backend
            assert not {str(uuid.UUID(key)) for key in (finished, idle, done)} & set(as_read)
            for table in ("invoice", "refund"):
                columns = {column.name for column in database.get_columns(table, schema=schema)}
                assert not columns & {"next_poll_at", "claimed_until", "claim_token"}, (backend, table)
        finally:
            if schema is not None:
                database.execute_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            database.close()
