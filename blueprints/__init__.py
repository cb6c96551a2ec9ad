"""HTTP only: parse (schemas) -> authorize -> call services -> dump (schemas)."""


def register_blueprints(app):
    from blueprints import (docs, exports, health, integrations, invoices, operator, pages, payment_links, public,
                            public_payment_links, refunds, reports, sandbox_payments, store_settings, transactions,
                            webhooks)

    for module in (health, invoices, transactions, payment_links, public_payment_links, webhooks, integrations,
                   public, sandbox_payments, operator, docs, pages, exports, reports, refunds, store_settings):
        app.register_blueprint(module.bp)
    from blueprints import dashboard

    app.register_blueprint(dashboard.bp)
