"""HTTP only: parse (schemas) -> authorize -> call services -> dump (schemas)."""


def register_blueprints(app):
    from blueprints import health, invoices, public, test_helpers, transactions

    for module in (health, invoices, transactions, public, test_helpers):
        app.register_blueprint(module.bp)
