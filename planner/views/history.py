"""``planner history`` for people: one row per series and run of days with the same figures, the change
in its cheapest price, the stock, and the regions the scope left out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.output import money, table
from planner.pricing.query import scope_words

if TYPE_CHECKING:  # pragma: no cover
    from planner.answers.history import History, HistoryDay


def _stock_cell(r: HistoryDay) -> str:
    if r.idle_gpus is not None:
        idle = f"idle {r.idle_gpus}/{r.total_gpus}" if r.total_gpus is not None else f"idle {r.idle_gpus}"
        most = r.max_idle_gpus_per_machine
        return idle if most is None else f"{idle}, ≤{most} on one machine"
    if not r.stock_known:
        return "-"
    if r.sold_out == 0:
        return f"available ({r.stock_known})"
    if r.sold_out == r.stock_known:
        return f"sold out ({r.stock_known})"
    return f"{r.sold_out}/{r.stock_known} sold out"


def render_history(history: History) -> str:
    """Rows per series, oldest first; consecutive days with the same figures fold into one row."""
    found, models, window = history.rows, history.gpu_models, history.window
    if not found:
        return (
            f"No prices for {', '.join(models)} in {window.text}. "
            "Try --days, without --provider/--billing, or `planner refresh`."
        ) + "".join(f"\n{line}" for line in _outside_lines(history))
    with_median = any(r.median_cny_per_gpu_hour is not None for r in found)
    rows: list[list[str]] = []
    series_last: dict[tuple[str, str, str], tuple] = {}
    folded: list[list] = []  # [first_day, last_day, row, figures]
    for r in found:
        series = (r.gpu_model, r.provider, r.billing)
        figures = (r.instances, r.min_cny_per_gpu_hour, r.max_cny_per_gpu_hour, r.median_cny_per_gpu_hour,
                   _stock_cell(r))  # fmt: skip
        previous = series_last.get(series)
        if previous and previous[1] == figures and folded and folded[-1][2] == series:
            folded[-1][1] = r.day
            continue
        change = "-"
        if previous:
            # Over the instances priced on both days: a price change, never a change of mix.
            delta = r.change_percent
            change = "-" if delta is None else "=" if delta == 0 else f"{delta:+.1f}%"
            change += "*" if r.set_changed else ""
        series_last[series] = (r, figures)
        folded.append([r.day, r.day, series, r, change])
    for first, last, _series, r, change in folded:
        when = f"{first}" if first == last else f"{first} .. {last:%m-%d}"
        row = [
            when,
            r.provider,
            r.gpu_model,
            r.billing,
            str(r.instances),
            money(r.min_cny_per_gpu_hour),
            money(r.max_cny_per_gpu_hour),
        ]
        if with_median:
            row.append(money(r.median_cny_per_gpu_hour))
        rows.extend([[*row, change, _stock_cell(r)]])
    headers = ["day(s)", "provider", "gpu", "billing", "instances", "min CNY/GPU-h", "max CNY/GPU-h"]
    headers += ["median"] if with_median else []
    headers += ["price change", "stock"]
    right = (4, 5, 6, 7, 8) if with_median else (4, 5, 6, 7)
    lines = [f"History of {', '.join(models)} over {window.text} (UTC days; CNY per GPU-hour):"]
    if window.early:
        lines.append(window.note())
    lines.append(table(rows, headers, align_right=right))
    notes = []
    if with_median:
        notes.append("median: AutoDL's median listing (the min is its cheapest).")
    notes.append(
        "price change: of the cheapest price over the instances priced on both days, never a change of mix."
    )
    if any(r.set_changed for r in found):
        notes.append("*: the set of instances changed that day (some were added or are no longer priced).")
    notes.append("stock: sold out / available among the instances that said so, or idle/total GPUs (AutoDL).")
    lines.extend(["", *notes, *_outside_lines(history)])
    return "\n".join(lines)


def _outside_lines(history: History) -> list[str]:
    """One line naming the priced regions the scope left out, when there are any."""
    if not history.outside:
        return []
    return [
        f"Left out, outside {scope_words(history.scope)}: {', '.join(history.outside)} (use --scope all)."
    ]
