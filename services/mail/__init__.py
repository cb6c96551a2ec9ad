"""Mail (docs/email.md): what Tender tells merchants and buyers, written to an outbox in the
transaction of the fact it reports and sent over SMTP by the `mail` queue's job."""
