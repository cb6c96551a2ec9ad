"""HTTP only: parse (schemas) -> authorize -> call services -> dump (schemas)."""


def register_blueprints(app):
    from blueprints import docs, health, invoices, payment_links, public_payment_links, transactions, webhooks

    for module in (health, invoices, transactions, payment_links, public_payment_links, webhooks, docs):
        app.register_blueprint(module.bp)
