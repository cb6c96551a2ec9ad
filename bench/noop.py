"""The empty job of the baseline loop (importable by a forked work horse)."""


def noop() -> None:
    return None
