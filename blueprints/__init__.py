"""HTTP only: parse (schemas) -> authorize -> call services -> dump (schemas)."""


def register_blueprints(app):
    from blueprints import (health, integrations, invoices, payment_links, public_payment_links, transactions,
                            webhooks)

    for module in (health, invoices, transactions, payment_links, public_payment_links, webhooks, integrations):
        app.register_blueprint(module.bp)
