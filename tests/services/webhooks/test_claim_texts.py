"""The delivery claim is written out whole once per database (services/webhooks/delivery_claim.*.sql);
what both say must be said alike, so a change to the caps made in one text and not the other fails here."""
import re

from services.webhooks import delivery_claim

# Where the texts differ, on purpose: how a fan-out's ids are passed and a target's oldest few read
# (`candidates`), the row locks of `chosen`, and how the claimed rows reach the last SELECT.
ROW_LOCKS = "    FOR UPDATE OF d SKIP LOCKED\n"
SHARED_STEPS = ("in_flight", "target_held", "store_held", "due_count", "targets", "by_target", "stores_due",
                "by_store", "chosen")


def _steps(text: str) -> dict[str, str]:
    """Each WITH step's body by name, and the last SELECT's columns and joins as "needs"."""
    steps = dict(re.findall(r"^(?:WITH RECURSIVE |\), )(\w+)(?:\(\w+\))? AS \(\n(.*?)(?=^\)(?:, \w|\n|;))",
                            text, flags=re.MULTILINE | re.DOTALL))
    columns, joins = re.search(r"^SELECT (c\.id, .*?)^FROM .*?\n(JOIN event .*)", text,
                               flags=re.MULTILINE | re.DOTALL).groups()
    steps["needs"] = columns + joins
    return steps


def _as_sqlite_writes_it(text: str) -> str:
    """PostgreSQL's parameters (`%(now)s`) as SQLite's (`:now`), and its array cast dropped."""
    return re.sub(r"%\((\w+)\)s", r":\1", text).replace("::uuid[]", "")


def test_the_two_claim_texts_agree_on_everything_they_share():
    postgres = _steps(_as_sqlite_writes_it(delivery_claim.POSTGRES_SQL.read_text()))
    sqlite = _steps(delivery_claim.SQLITE_SQL.read_text())
    assert set(SHARED_STEPS) < set(postgres) and set(SHARED_STEPS) < set(sqlite)
    assert ROW_LOCKS in postgres["chosen"] and ROW_LOCKS not in sqlite["chosen"]
    postgres["chosen"] = postgres["chosen"].replace(ROW_LOCKS, "")
    for name in SHARED_STEPS + ("needs",):
        assert postgres[name] == sqlite[name], name


def test_the_comparison_sees_a_difference():
    """A cap changed in one text only is caught."""
    text = delivery_claim.SQLITE_SQL.read_text()
    cap = ":per_target - COALESCE(t.held, 0) AS target_room"
    assert cap in text
    changed = _steps(text.replace(cap, ":per_target + 1 - COALESCE(t.held, 0) AS target_room"))
    assert changed["by_target"] != _steps(text)["by_target"]
