"""The benchmarks: each is `python -m bench.NAME` and prints ratios against a bare baseline
measured in the same run (docs/performance.md)."""
from __future__ import annotations

import argparse


def int_options(**defaults: int) -> argparse.Namespace:
    """The command line of a benchmark whose options are all whole numbers: `--name` for each
    default (an underscore is a dash: `empty_jobs` is `--empty-jobs`)."""
    parser = argparse.ArgumentParser()
    for name, default in defaults.items():
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=default)
    return parser.parse_args()
