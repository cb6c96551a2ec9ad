"""HTTP only: parse (schemas) -> authorize -> call services -> dump (schemas)."""


def register_blueprints(app):
    from blueprints import health, invoices, transactions, webhooks

    for module in (health, invoices, transactions, webhooks):
        app.register_blueprint(module.bp)
