"""Loaded by the Python of the server `make fuzz` starts (PYTHONPATH): fuzzed webhook hosts must
not become DNS queries that leave this machine (tests/support/loopback_only.py)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from tests.support import loopback_only  # noqa: E402

loopback_only.install()
