"""The rooms and their one-way arrows (docs/architecture.md), enforced by import-linter's contract
in .importlinter: each room imports only the rooms below it."""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
ROOMS = ("blueprints", "scheduler", "jobs", "apidoc", "services", "schemas", "providers", "infra", "models", "core")


def lint_imports(root: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"})


def test_the_code_keeps_the_layers():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_an_arrow_pointing_up_breaks_the_contract(tmp_path):
    """The contract can fail: the ground package importing the payment engine is refused."""
    for room in ROOMS:
        shutil.copytree(ROOT / room, tmp_path / room, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    clock = tmp_path / "core" / "clock.py"
    clock.write_text(clock.read_text() + "\nfrom services.engine import invoices  # noqa\n")
    result = lint_imports(tmp_path)
    assert result.returncode != 0 and "core.clock -> services.engine.invoices" in result.stdout, result.stdout


def test_services_never_ask_which_database_they_run_on():
    """Where PostgreSQL and SQLite differ, the code lives in infra/database.py (docs/decisions.md):
    no module under services/ names `is_postgres`."""
    asking = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "services").rglob("*.py"))
              if "is_postgres" in path.read_text()]
    assert asking == []
