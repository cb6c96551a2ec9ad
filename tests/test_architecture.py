"""The rooms and their one-way arrows (docs/architecture.md), enforced by import-linter's contracts
in .importlinter: each room imports only the rooms below it, and so does each room of services/."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
ROOMS = ("blueprints", "scheduler", "jobs", "apidoc", "services", "schemas", "providers", "infra", "models", "config",
         "core")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def test_the_code_keeps_the_layers():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


@pytest.mark.parametrize("module, line, arrow", [
    # the ground importing the payment engine
    ("core/clock.py", "from services.engine import invoices", "core.clock -> services.engine.invoices"),
    # settings reaching up into the plumbing that reads them
    ("config/__init__.py", "from infra import database", "config -> infra.database"),
    # inside services/: the outbox importing the engine that writes through it
    ("services/webhooks/outbox.py", "from services.engine import events", "services.webhooks.outbox -> services.engine.events"),
    # the roll-up importing the books that read it
    ("services/settlement_days.py", "from services.books import reports", "services.settlement_days -> services.books.reports"),
])
def test_an_arrow_pointing_up_breaks_the_contract(tmp_path, module, line, arrow):
    """The contracts can fail: each of these imports points up and is refused."""
    for room in ROOMS:
        shutil.copytree(ROOT / room, tmp_path / room, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    path = tmp_path / module
    path.write_text(path.read_text() + f"\n{line}  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0 and arrow in result.stdout, result.stdout


def test_services_never_ask_which_database_they_run_on():
    """Where PostgreSQL and SQLite differ, the code lives in infra/database.py (docs/decisions.md):
    no module under services/ names `is_postgres`."""
    asking = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "services").rglob("*.py"))
              if "is_postgres" in path.read_text()]
    assert asking == []


def test_infra_asks_which_database_it_is_on_one_way():
    """Within infra/, the one question "PostgreSQL or SQLite?" is `infra/database.on_postgres`;
    nothing there names the global `is_postgres`."""
    asking = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "infra").rglob("*.py"))
              if "is_postgres" in path.read_text()]
    assert asking == []


# Where rows the settlement statement's roll-up sums may be written (services/settlement_days.py
# must see each write in its transaction): transactions only by `services/engine/transactions.insert`,
# and an invoice's paid and settled amounts only by the moves of invoice_states (`move`, or an
# `Answer`'s `set` and `move`), which roll them up in their write. Outside the tests, which build rows through the same functions (tests/factories.py),
# and the migrations, frozen as they ran.
TRANSACTION_WRITERS = {("services/engine/transactions.py", "insert")}
INSERTING = {"create", "insert", "insert_many", "insert_from", "bulk_create", "replace", "replace_many",
             "get_or_create"}
# Bulk loads that sum their days again afterwards (`flask statement rebuild`).
WRITING_AROUND_THE_ROLL_UP = {"bench/exports.py", "bench/dashboard_seed.py"}


def _application_sources():
    for path in sorted(ROOT.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[0] in ("tests", "migrations", ".venv", "node_modules") or ".venv" in relative.parts:
            continue
        yield str(relative), path.read_text()


def _calls_by_function(source: str):
    import ast

    tree = ast.parse(source)
    for function in [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]:
        for node in ast.walk(function):
            if isinstance(node, ast.Call):
                yield function.name, node
    for node in tree.body:                     # module level
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call):
                    yield "<module>", inner


def _names_transaction(node) -> bool:
    import ast

    return (isinstance(node, ast.Name) and node.id == "Transaction") or (
        isinstance(node, ast.Call) and _names_transaction(node.func))


def test_transactions_are_inserted_only_where_the_roll_up_is_kept():
    import ast

    found = set()
    for relative, source in _application_sources():
        if relative in WRITING_AROUND_THE_ROLL_UP:
            continue
        assert 'INTO "transaction"' not in source and "INTO transaction " not in source, relative
        for function, call in _calls_by_function(source):
            func = call.func
            direct = (isinstance(func, ast.Attribute) and func.attr in INSERTING and _names_transaction(func.value))
            helper = (call.args and _names_transaction(call.args[0])
                      and getattr(func, "attr", getattr(func, "id", "")) in ("insert", "insert_rows"))
            saved = isinstance(func, ast.Attribute) and func.attr == "save" and _names_transaction(func.value)
            if direct or helper or saved:
                found.add((relative, function))
    assert found == TRANSACTION_WRITERS


def test_paid_and_settled_amounts_are_written_only_by_the_moves():
    """Any call naming `paid_at`, `paid_amount` or `difference_amount` is `invoice_states.move` or
    an Answer's `set` or `move`; no SQL of the application updates them."""
    import ast

    from services.settlement_days import SUMMED_FIELDS

    strays = []
    for relative, source in _application_sources():
        if relative in WRITING_AROUND_THE_ROLL_UP:
            continue
        for function, call in _calls_by_function(source):
            if not SUMMED_FIELDS & {keyword.arg for keyword in call.keywords}:
                continue
            func = call.func
            by_a_move = (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
                         and (func.value.id, func.attr) in (("answer", "set"), ("answer", "move"),
                                                            ("invoice_states", "move")))
            if not by_a_move:
                strays.append((relative, function, call.lineno))
        assert not re.search(r'UPDATE\s+"?invoice"?\s+SET[^;]*\b(' + "|".join(SUMMED_FIELDS) + r')\s*=', source), relative
    assert strays == []
