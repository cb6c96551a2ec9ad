"""HTTP only: parse (schemas) -> authorize -> call services -> dump (schemas)."""


def register_blueprints(app):
    from blueprints import health, invoices, transactions

    for module in (health, invoices, transactions):
        app.register_blueprint(module.bp)
