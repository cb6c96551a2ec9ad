"""The npm tools the tests use (package.json: `npm ci` installs them into node_modules/).

`make test` on a machine with Python alone skips the tests that need them; CI (`CI` set, as
.ci/run runs) fails instead, so a missing `npm ci` cannot pass unnoticed."""
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def node_tool(name: str) -> Path:
    """node_modules/.bin/<name>, or skip (fail under CI) when `npm ci` has not run."""
    tool = ROOT / "node_modules" / ".bin" / name
    if not tool.exists():
        message = f"{tool.relative_to(ROOT)} is missing: run `npm ci` (Node.js 20+)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return tool
