"""The bare baseline of bench/create_invoice.py: Flask + peewee, the same pool settings as Tender
(models.base.make_database: PooledPostgresqlDatabase, 20 connections, stale timeout 300 s), and the
same number of inserts per request as `POST /v1/invoices` (the invoice row and its event row, in
one transaction). No auth, validation, rate limits, logs, metrics or queue nudge: those are what
the ratio prices.

    DATABASE_URL=postgresql://… gunicorn --config gunicorn.conf.py 'bench.bare_app:create_app()'
"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal
import json
import os
import uuid

import peewee as pw
from flask import Flask, request

from models.base import make_database

database = pw.DatabaseProxy()


class BareInvoice(pw.Model):
    id = pw.UUIDField(primary_key=True)
    public_id = pw.CharField(unique=True)
    amount = pw.DecimalField(max_digits=30, decimal_places=8)
    currency = pw.CharField()
    status = pw.CharField()
    metadata = pw.TextField(null=True)
    created_at = pw.DateTimeField()

    class Meta:
        database = database
        table_name = "bare_invoice"


class BareEvent(pw.Model):
    id = pw.UUIDField(primary_key=True)
    invoice = pw.ForeignKeyField(BareInvoice)
    type = pw.CharField()
    payload = pw.TextField()
    created_at = pw.DateTimeField()

    class Meta:
        database = database
        table_name = "bare_event"


def create_app() -> Flask:
    database.initialize(make_database(os.environ["DATABASE_URL"]))
    with database.connection_context(), database.atomic():
        # Each gunicorn worker runs this: on PostgreSQL two concurrent CREATE TABLE IF NOT EXISTS can
        # both try to create the table's type, and one worker fails to boot. One at a time.
        if isinstance(database.obj, pw.PostgresqlDatabase):
            database.execute_sql("SELECT pg_advisory_xact_lock(hashtext('tender bare_app tables'))")
        database.create_tables([BareInvoice, BareEvent], safe=True)
    app = Flask(__name__)

    @app.before_request
    def connect():
        database.connect(reuse_if_open=True)

    @app.teardown_request
    def release(_error):
        if not database.is_closed():
            database.close()

    @app.get("/health")
    def health():
        return {"status": "ok"}

    @app.post("/v1/invoices")
    def create_invoice():
        data = request.get_json()
        now = dt.datetime.utcnow()
        row = dict(id=uuid.uuid4(), public_id=f"inv_{uuid.uuid4().hex}", amount=Decimal(data["amount"]),
                   currency=data.get("currency", "USD"), status="pending",
                   metadata=json.dumps(data.get("metadata")), created_at=now)
        with database.atomic():
            BareInvoice.insert(row).execute()
            BareEvent.insert(id=uuid.uuid4(), invoice=row["id"], type="invoice.created",
                             payload=json.dumps({**row, "id": row["public_id"], "amount": str(row["amount"]),
                                                 "created_at": now.isoformat()}), created_at=now).execute()
        return {"id": row["public_id"], "amount": str(row["amount"]), "currency": row["currency"],
                "status": "pending", "created_at": now.isoformat()}, 201

    return app

