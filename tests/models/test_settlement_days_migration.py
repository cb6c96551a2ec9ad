"""The upgrade that gives both databases the statement's daily roll-up, kept by the application
(migrations/0014_settlement_days_everywhere.py): SQLite sums it from the rows already there;
PostgreSQL keeps the rows its triggers wrote, and the triggers are gone.

It runs the migrations up to the one before, writes paid invoices, a settlement and a merchant
refund's delivery as the old schema had them, then upgrades: on a SQLite file of its own, or in a
schema of its own in the test database."""
import datetime as dt
from decimal import Decimal
import os
import uuid

from playhouse.migrations import Runner

from cli import MIGRATIONS_DIR
from models.base import make_database
from tests.support.databases import postgres_in_schema

PAID = dt.datetime(2030, 1, 1, 23, 50, 0)
SETTLED = dt.datetime(2030, 1, 2, 0, 5, 0)
SCHEMA = "settlement_days_upgrade"


def _databases(tmp_path):
    # As the application opens SQLite: amounts in text columns (models/base.py).
    yield "sqlite", make_database(f"sqlite:///{tmp_path / 'upgrade.db'}"), None
    database = postgres_in_schema(SCHEMA)
    if database is not None:
        yield "postgresql", database, SCHEMA


def _insert(database, table, **values):
    names = ", ".join(values)
    marks = ", ".join([database.param] * len(values))
    database.execute_sql(f'INSERT INTO "{table}" ({names}) VALUES ({marks})', list(values.values()))
    return values.get("id")


def _invoice(database, store_id, paid_amount, **columns):
    return _insert(database, "invoice", id=uuid.uuid4().hex, public_id="inv_" + uuid.uuid4().hex,
                   store_id=store_id, status="paid", amount=paid_amount, currency="USD", order_amount=paid_amount,
                   order_currency="USD", output_asset="usdc.near", expires_at=PAID, created_at=PAID,
                   updated_at=PAID, paid_at=PAID, paid_amount=paid_amount, **columns)


def _transaction(database, store_id, invoice_id, type_, amount, at, **columns):
    _insert(database, "transaction", id=uuid.uuid4().hex, public_id="txn_" + uuid.uuid4().hex, store_id=store_id,
            invoice_id=invoice_id, type=type_, network="near", token="usdc.near", amount=amount,
            transaction_hash="0x" + uuid.uuid4().hex, status="confirmed", verified=True, created_at=at,
            updated_at=at, **columns)


def test_the_upgrade_sums_or_keeps_the_roll_up_and_drops_the_triggers(tmp_path):
    previous = sorted(name for name in os.listdir(MIGRATIONS_DIR) if name[:4].isdigit() and name < "0014")[-1][:-3]
    for backend, database, schema in _databases(tmp_path):
        try:
            database.connect(reuse_if_open=True)
            runner = Runner(database, directory=MIGRATIONS_DIR, schema=schema)
            runner.up(target=previous)
            store_id = uuid.uuid4().hex
            _insert(database, "store", id=store_id, name="Upgrade", output_asset="usdc.near",
                    callback_secret="s" * 32, created_at=PAID, updated_at=PAID)
            settled = _invoice(database, store_id, "25.00", received_amount="24.87", difference_amount="-0.13")
            _transaction(database, store_id, settled, "settlement", "24.870001", SETTLED)
            refunded = _invoice(database, store_id, "10.000000000000000001")
            refund_id = _insert(database, "refund", id=uuid.uuid4().hex, public_id="ref_" + uuid.uuid4().hex,
                                store_id=store_id, invoice_id=refunded, status="succeeded", amount="5.00",
                                currency="USD", asset="usdc.eth", refund_to="0xbuyer", estimated_amount_out="5",
                                funding_asset="usdc.near", funding_amount="5", deposit_address="r",
                                expires_at=PAID, quoted_at=PAID, created_at=PAID, updated_at=PAID)
            _transaction(database, store_id, refunded, "refund", "4.9", SETTLED, refund_id=refund_id)
            runner.up()
            rows = database.execute_sql(
                "SELECT day, currency, invoices_paid, gross_paid, received, difference, refunds, refunded, movements "
                "FROM settlement_day ORDER BY day").fetchall()
            as_read = [(str(day), currency, paid, Decimal(str(gross)), Decimal(str(received)),
                        Decimal(str(difference)), refunds, Decimal(str(refunded_sum)), movements)
                       for day, currency, paid, gross, received, difference, refunds, refunded_sum, movements in rows]
            assert as_read == [
                ("2030-01-01", "USD", 2, Decimal("35.000000000000000001"), 0, 0, 0, 0, 2),
                ("2030-01-02", "USD", 0, 0, Decimal("24.870001"), Decimal("-0.13"), 1, Decimal("5.00"), 2),
            ], backend
            # Kept by the application from here on: a row written in SQL alone adds nothing.
            _invoice(database, store_id, "1.00")
            assert database.execute_sql("SELECT SUM(invoices_paid) FROM settlement_day").fetchone()[0] == 2, backend
        finally:
            if schema is not None:
                database.execute_sql(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
            database.close()
