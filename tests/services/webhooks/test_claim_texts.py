"""The delivery claim is written out whole for each database (services/webhooks/delivery_claim.*.sql),
a delivery run's and a fan-out's; what they all say must be said alike, so a change to the caps made
in one text and not the others fails here."""
import re

from services.webhooks import delivery_claim

# Where the texts differ, on purpose: what a claim chooses among (`candidates`: how a fan-out's ids
# are passed, how a target's oldest few are read), the row locks of `chosen` on PostgreSQL, and how
# the claimed rows reach the last SELECT.
ROW_LOCKS = "    FOR UPDATE OF d SKIP LOCKED\n"
SHARED_STEPS = ("in_flight", "target_held", "store_held", "by_target", "stores_due", "stores_busy", "by_store",
                "chosen", "needs")
DUE_STEPS = ("due_count", "targets")         # a delivery run's claim only


def _steps(text: str) -> dict[str, str]:
    """Each WITH step's body by name, and the last SELECT's columns and joins as "needs"."""
    steps = dict(re.findall(r"^(?:WITH (?:RECURSIVE )?|\), )(\w+)(?:\(\w+\))? AS \(\n(.*?)(?=^\)(?:, \w|\n|;))",
                            text, flags=re.MULTILINE | re.DOTALL))
    columns, joins = re.search(r"^SELECT (c\.id, .*?)^FROM .*?\n(JOIN event .*)", text,
                               flags=re.MULTILINE | re.DOTALL).groups()
    steps["needs"] = columns + joins
    return steps


def _as_sqlite_writes_it(text: str) -> str:
    """PostgreSQL's parameters (`%(now)s`) as SQLite's (`:now`)."""
    return re.sub(r"%\((\w+)\)s", r":\1", text)


def _claims() -> dict[str, dict[str, str]]:
    postgres = delivery_claim.statements(delivery_claim.POSTGRES_SQL)
    sqlite = delivery_claim.statements(delivery_claim.SQLITE_SQL)
    claims = {"postgres due": postgres["claim_due"], "postgres new": postgres["claim_new"],
              "sqlite due": sqlite["choose_due"] + sqlite["read"], "sqlite new": sqlite["choose_new"] + sqlite["read"]}
    steps = {name: _steps(_as_sqlite_writes_it(text)) for name, text in claims.items()}
    for name in ("postgres due", "postgres new"):
        assert ROW_LOCKS in steps[name]["chosen"]
        steps[name]["chosen"] = steps[name]["chosen"].replace(ROW_LOCKS, "")
    return steps


def test_the_claim_texts_agree_on_everything_they_share():
    steps = _claims()
    for step in SHARED_STEPS:
        assert len({claim[step] for claim in steps.values()}) == 1, step
    for step in DUE_STEPS:
        assert steps["postgres due"][step] == steps["sqlite due"][step], step
        assert step not in steps["postgres new"] and step not in steps["sqlite new"]


def test_the_comparison_sees_a_difference():
    """A cap changed in one text only is caught."""
    sqlite = delivery_claim.statements(delivery_claim.SQLITE_SQL)
    text = sqlite["choose_due"] + sqlite["read"]
    cap = ":per_target - COALESCE(t.held, 0) AS target_room"
    assert cap in text
    changed = _steps(text.replace(cap, ":per_target + 1 - COALESCE(t.held, 0) AS target_room"))
    assert changed["by_target"] != _steps(text)["by_target"]
