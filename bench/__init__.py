"""The benchmarks: each is `python -m bench.NAME` and prints ratios against a bare baseline
measured in the same run (docs/performance.md)."""
from __future__ import annotations

import argparse
import statistics


def int_options(**defaults: int) -> argparse.Namespace:
    """The command line of a benchmark whose options are all whole numbers: `--name` for each
    default (an underscore is a dash: `empty_jobs` is `--empty-jobs`)."""
    parser = argparse.ArgumentParser()
    for name, default in defaults.items():
        parser.add_argument("--" + name.replace("_", "-"), type=int, default=default)
    return parser.parse_args()


def print_spread(seconds: dict[str, list[float]], what: str) -> None:
    """Each side's count, median and p90 in milliseconds: `seconds` maps a side to its timings."""
    for side, figures in seconds.items():
        ordered = sorted(figures)
        print(f"  {side}: {len(ordered)} {what}, p50 {statistics.median(ordered) * 1000:.2f} ms, "
              f"p90 {ordered[int(len(ordered) * 0.9)] * 1000:.2f} ms")
