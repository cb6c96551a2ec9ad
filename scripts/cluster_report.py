"""What `make cluster-check` measures per fault, the budgets it holds each fault to, and the lines it
prints (scripts/cluster.py runs the cluster; this file only judges and formats, so it is tested
without one: tests/scripts/test_cluster_report.py).

Per fault: pay → `invoice.paid` (from the buyer's payment accepted to the merchant's receiver
getting the event), its median and maximum; and the longest refused-retry window: for each step
of the workload, from the moment its first attempt failed (the client learned it had to retry) to
the moment a retry succeeded.

An event received twice is shown, not failed: webhooks are delivered at least once, and an attempt
cut off with its host after the receiver got it (its 2xx never came back) is sent again; receivers
dedupe by event id (docs/retries.md). A payment or an event lost, or a flow never finished, fails."""
from __future__ import annotations

BUDGETS = {"pay_to_invoice_paid_p50_s": 5.0, "pay_to_invoice_paid_max_s": 15.0, "longest_refused_retry_s": 15.0}
LOSSES = ("payments_lost", "events_lost")


def median(values: list[float]) -> float | None:
    ordered = sorted(values)
    return round(ordered[len(ordered) // 2], 1) if ordered else None


def refused_window(failed_at: list[float], succeeded_at: float) -> float:
    """How long one step's retries were refused: from its first failure to its success (0 without one)."""
    return round(succeeded_at - min(failed_at), 1) if failed_at else 0.0


def over_budget(fault: dict) -> list[str]:
    """What a fault's figures broke: each budget exceeded, each loss or double, each unfinished flow."""
    broken = [f"{name} {fault.get(name)} > {limit:g}" for name, limit in BUDGETS.items()
              if fault.get(name) is None or fault[name] > limit]
    broken += [f"{name} {fault[name]}" for name in LOSSES if fault.get(name)]
    if fault.get("unfinished"):
        broken.append(f"{len(fault['unfinished'])} flows unfinished")
    if fault.get("every_invoice_settled") is False:
        broken.append("not every invoice settled")
    return broken


def fault_line(fault: dict) -> str:
    verdict = "; ".join(over_budget(fault)) or "within budget"
    return (f"{fault['fault'][:44]:44}  pay→paid p50 {fault.get('pay_to_invoice_paid_p50_s')} s, "
            f"max {fault.get('pay_to_invoice_paid_max_s')} s; refused retries {fault.get('requests_refused')}, "
            f"longest {fault.get('longest_refused_retry_s')} s; events received twice "
            f"{fault.get('events_duplicated')}; {verdict}")


def run_passed(report: dict) -> bool:
    return "error" not in report and bool(report.get("faults")) and not any(
        over_budget(fault) for fault in report["faults"]) and not report.get("totals", {}).get("invoices_doubled")


def summary(reports: list[dict], *, first: int = 1) -> str:
    """Every run's figures, one line per fault, and the verdict (runs numbered from `first`)."""
    lines = []
    for number, report in enumerate(reports, start=first):
        lines.append(f"run {number}: {'PASS' if run_passed(report) else 'FAIL'}"
                     + (f" ({report['error']})" if "error" in report else ""))
        lines += [f"  {fault_line(fault)}" for fault in report.get("faults", [])]
        if report.get("totals", {}).get("invoices_doubled"):
            lines.append(f"  invoices created twice: {report['totals']['invoices_doubled']}")
    passed = sum(run_passed(report) for report in reports)
    lines.append(f"cluster-check: {passed} of {len(reports)} runs within budget "
                 f"(p50 ≤ {BUDGETS['pay_to_invoice_paid_p50_s']:g} s, max ≤ {BUDGETS['pay_to_invoice_paid_max_s']:g} s, "
                 f"refused retry ≤ {BUDGETS['longest_refused_retry_s']:g} s, nothing lost or doubled)")
    return "\n".join(lines)
