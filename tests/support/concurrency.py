"""Running one function on several threads at once, as several workers would."""
from __future__ import annotations

import threading


def run_at_once(function, copies: int, *, timeout: float = 60) -> list[Exception]:
    """Run `function` on `copies` threads started together; the exceptions they raised (collected,
    so a failing thread fails the test that asks). Every thread must end within `timeout` seconds."""
    errors: list[Exception] = []

    def guarded():
        try:
            function()
        except Exception as error:
            errors.append(error)

    threads = [threading.Thread(target=guarded) for _ in range(copies)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
    assert not any(thread.is_alive() for thread in threads), f"a thread still runs after {timeout} s"
    return errors
