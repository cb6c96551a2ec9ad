"""Payment work never waits behind webhook work: the Procfile gives the `webhooks` queue a process
type of its own (docs/operations.md#queues), and together the types serve every queue."""
from pathlib import Path
import shlex

from infra import queues

ROOT = Path(__file__).resolve().parents[2]


def _queues_of(process: str) -> set[str]:
    line = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith(f"{process}:"))
    words = shlex.split(line.split(":", 1)[1])
    assert words[:2] == ["rq", "worker"]
    queues_named, skip = [], False
    for word in words[2:]:
        if skip:
            skip = False
        elif word.startswith("--"):
            skip = "=" not in word and word not in ("--with-scheduler", "--burst")
        else:
            queues_named.append(word)
    return set(queues_named)


def test_webhook_work_has_its_own_process_type():
    assert _queues_of("webhooks") == {"webhooks"}
    assert _queues_of("worker") == {"chain", "settlement", "maintenance", "mail"}
    assert _queues_of("worker") | _queues_of("webhooks") == set(queues.QUEUE_NAMES)
