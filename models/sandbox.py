import peewee as pw

from models.base import BaseModel
from models.fields import AmountField


class SandboxDeposit(BaseModel):
    """One simulated deposit address of the sandbox provider (providers/sandbox.py).

    It lives in the database so the web process and every worker see the same simulated chain.
    """

    deposit_address = pw.CharField(max_length=256, primary_key=True)
    deposit_memo = pw.CharField(max_length=64, null=True)
    correlation_id = pw.CharField(max_length=64)
    origin_asset = pw.CharField(max_length=64)
    destination_asset = pw.CharField(max_length=64)
    amount_in = AmountField()
    amount_out = AmountField()
    recipient = pw.CharField(max_length=256)
    refund_to = pw.CharField(max_length=256)
    deadline = pw.DateTimeField()
    created_at = pw.DateTimeField()
    outcome = pw.CharField(max_length=16, null=True)
    deposited_amount = AmountField(null=True)
    deposited_at = pw.DateTimeField(null=True)
    polls = pw.IntegerField(default=0)
    origin_tx_hash = pw.CharField(max_length=128, null=True)
    destination_tx_hash = pw.CharField(max_length=128, null=True)
    refund_tx_hash = pw.CharField(max_length=128, null=True)
