"""peewee models, one module per aggregate. Import from the modules; this list is for tooling."""
from models.events import Event
from models.exchange_rates import ExchangeRate
from models.integrations import Integration
from models.invoices import Invoice
from models.mail import Mail, StoreNotifications
from models.payment_links import IdempotencyKey, PaymentLink
from models.people import AuditEntry, Invitation, Membership, PasswordReset, User
from models.polls import PollState
from models.refunds import Refund
from models.sandbox import SandboxDeposit
from models.stores import ApiKey, Store
from models.transactions import Transaction
from models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEndpoint

ALL_MODELS = [Store, ApiKey, Invoice, Transaction, Event, PaymentLink, IdempotencyKey,
              WebhookEndpoint, WebhookDelivery, WebhookAttempt, SandboxDeposit, Integration, PollState,
              Refund, Mail, StoreNotifications, User, Membership, Invitation, PasswordReset, AuditEntry,
              ExchangeRate]
