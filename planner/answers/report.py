"""The report pipeline: dated CSV reports, the report's web page and a price chart in a folder,
optionally e-mailed.

``planner report`` and the nightly schedule both call :func:`produce_report`; neither holds any of it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from planner.billing import ON_DEMAND
from planner.catalog import rental_rank
from planner.config import Config, data_dir, language, zone
from planner.errors import PlannerError, UsageError, write_error
from planner.folders import ensure_folder
from planner.pricing.cost import cheapest_in_and_out_of_scope, cheapest_offers
from planner.pricing.headline import list_price
from planner.pricing.query import (
    ALL,
    OfferQuery,
    cheaper_outside_line,
    check_scope,
    chosen_scope,
    scope_words,
    within,
)
from planner.providers import PROVIDERS
from planner.smtp import check_address, smtp_settings
from planner.wording import Phrase
from reports.chart import NAME, Chart, why_not_drawn, write_chart
from reports.mail import MailError, compose, new_id, send
from reports.page import CONTENTS as PAGE_CONTENTS
from reports.page import NAME as PAGE_NAME
from reports.page import write_page
from vocab.words import ENGLISH, say, word

if TYPE_CHECKING:  # the report's tables need pandas: loaded when a report is built
    from sqlalchemy.engine import Connection

    from planner.app import App
    from planner.ingest.snapshot import SnapshotInfo
    from reports.build import Report
    from reports.data import CheapestChoice


class ReportNotSent(PlannerError):
    """The files are written but the e-mail could not be delivered."""

    def __init__(self, message: str, hint: str, out_dir: Path):
        super().__init__(message, hint)
        self.out_dir = out_dir


@dataclass(frozen=True)
class ReportOutcome:
    report: Report
    out_dir: Path
    files: tuple[Path, ...]
    recipients: tuple[str, ...] = ()
    refused: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    chart: Chart | None = None  # the PNG drawn, or why not
    page: Path | None = None  # the report as one web page (reports.page)

    def listing(self) -> list[tuple[str, Path, int, str]]:
        """What was written, in order: (table name, path, rows, contents) for each CSV file, then the
        web page, whose rows are its GPU models (the cheapest table's), then the chart's PNG, whose rows
        are the points drawn (a GPU model on a day)."""
        from reports.build import TABLES

        listed: list[tuple[str, Path, int, str]] = [
            (name, path, len(self.report.tables[name]), TABLES[name])
            for name, path in zip(TABLES, self.files, strict=True)
        ]
        if self.page is not None:
            listed.append((PAGE_NAME, self.page, len(self.report.tables["cheapest"]), PAGE_CONTENTS))
        chart = self.chart
        if chart is not None and chart.path is not None and chart.trend is not None:  # drawn
            points = sum(len(line.days) for line in chart.trend.lines)
            count = len(chart.trend.lines)
            what = f"chart: each day's cheapest on-demand CNY per GPU-hour of {count} GPU model(s)"
            listed.append((NAME, chart.path, points, what))
        return listed

    def to_dict(self) -> dict[str, Any]:
        """The JSON of ``planner report``: the day, the files with their rows, notes and recipients."""
        report, chart = self.report, self.chart
        return {
            "day": report.day,
            "as_of": report.as_of,
            "out_dir": str(self.out_dir),
            "files": [
                {"table": name, "path": str(path), "rows": rows} for name, path, rows, _ in self.listing()
            ],
            "chart_note": chart.note if chart is not None else None,
            "scope": report.scope,
            "scope_notes": list(report.scope_notes),
            "emailed_to": list(self.recipients),
            "refused": sorted(self.refused),
        }


def default_out_dir(config: Config) -> Path:
    """[report] out_dir, else ``reports`` in the data directory."""
    configured = config.section("report")["out_dir"]
    return Path(configured).expanduser() if configured else data_dir() / "reports"


def recipients_for(emails: Sequence[str], config: Config) -> list[str]:
    """``--email ADDR`` values; a bare ``--email`` stands for [email] recipients."""
    configured = list(config.section("email")["recipients"])
    wanted: list[str] = []
    for value in emails:
        if value:
            wanted.append(check_address(value, "{email}"))
        elif not configured:
            raise UsageError(
                Phrase("{email} without an address needs [email] recipients"),
                hint=Phrase("give {email} ADDR, or set recipients"),
            )
        else:
            wanted.extend(check_address(a, "[email] recipients") for a in configured)
    return list(dict.fromkeys(wanted))


def report_day(config: Config) -> dt.date:
    """Today in the team's time zone ([schedule] timezone): the date in the file names."""
    return dt.datetime.now(zone(config.section("schedule")["timezone"])).date()


def cheapest_for(
    gpu_models: Sequence[str],
    providers: Sequence[str],
    fx: Mapping[str, Any],
    scope: str = "all",
    lang: str = ENGLISH,
) -> Callable[[Connection], CheapestChoice]:
    """The report's cheapest offer per GPU model, chosen by the pricing core (what can be rented now)
    within the region ``scope`` (``planner.pricing.query``), as a ``reports.data.CheapestChoice`` with a
    line saying the scope and one per model with a cheaper option outside it (quote's line), in
    ``lang``, and the catalog's ranking of the models (``catalog.rental_rank``: the GPUs teams rent
    first), which the cheapest table follows."""
    scope = check_scope(scope, "[quote] scope")

    def cheapest(conn: Connection) -> CheapestChoice:
        from reports.data import CheapestChoice

        query = OfferQuery(gpu_models=tuple(gpu_models), providers=tuple(providers), scope=scope)
        found, away = cheapest_in_and_out_of_scope(conn, query, fx)
        hourly = cheapest_offers(conn, replace(query, billing=(ON_DEMAND,)), fx)
        notes = [scope_note(scope, lang)]
        for model, o in away.items():
            notes.append(_cheaper_outside(scope, model, o, lang))
        return CheapestChoice(
            offers={m: (o.provider, o.region, o.instance_type, o.billing) for m, o in found.items()},
            scope=scope,
            in_scope=lambda provider, region: within(scope, provider, region),
            notes=tuple(notes),
            on_demand={m: float(list_price(o).cny_per_gpu_hour) for m, o in hourly.items()},
            ranking={m: rental_rank(m) for m in found},
        )

    return cheapest


def _cheaper_outside(scope: str, model: str, offer: Any, lang: str) -> str:
    """Quote's line naming a cheaper option outside the scope, in ``lang``."""
    if lang == ENGLISH:
        amount = f"{model} at CNY {offer.cny_per_gpu_hour:,.2f} per GPU-hour"
        return cheaper_outside_line(scope, offer, amount, '[quote] scope = "all" includes it')
    return say(
        "report.cheaper_outside",
        lang,
        scope=word("scope", scope, lang),
        provider=word("provider", offer.provider, lang),
        region=offer.region,
        instance=offer.instance_type,
        billing=word("billing", offer.billing, lang),
        gpu=model,
        amount=f"{offer.cny_per_gpu_hour:,.2f}",
        day=f"{offer.observed_at:%Y-%m-%d}",
    )


def scope_note(scope: str, lang: str = ENGLISH) -> str:
    """The report's line on its region scope: which regions the cheapest table (and so the chart) covers."""
    if scope == ALL:
        return say("report.scope_all", lang)
    words = scope_words(scope) if lang == ENGLISH else word("scope", scope, lang)
    return say("report.scope_some", lang, scope=words, name=scope)


def produce_report(
    app: App,
    *,
    out_dir: Path | None = None,
    recipients: Sequence[str] = (),
    gpu_models: Sequence[str] = (),
    providers: Sequence[str] = (),
    sleep: Callable[[float], None] | None = None,
    on_retry: Callable[[int, MailError, float], None] | None = None,
    on_loaded: Callable[[SnapshotInfo | None], None] | None = None,
    chart: bool | None = None,
    on_warning: Callable[[str], None] | None = None,
    on_created: Callable[[str], None] | None = None,
    scope: str | None = None,
    lang: str | None = None,
) -> ReportOutcome:
    """Build and write the report (CSV files and its web page) and its chart, then e-mail it to
    ``recipients`` (if any), the page attached beside the CSV files.

    ``chart`` None follows [report] chart. A chart that cannot be drawn costs nothing else: the CSV files
    are written and sent, ``on_warning`` gets one line and the e-mail a note. A missing ``out_dir`` is
    created and ``on_created`` gets a line saying so. ``scope`` (None: [quote] scope) is the region
    scope of the cheapest table and the chart. ``lang`` (None: ``planner.config.language``) is the
    language of the e-mail, the CSV headers and the web page.
    Raises ReportNotSent (files on disk, exit code 1) when the e-mail cannot be delivered.
    """
    from reports.build import build_report, write_report

    scope = chosen_scope(scope, app.config)  # a bad [quote] scope is refused before any work
    lang = lang or language(app.config)
    day = report_day(app.config)
    out_dir = Path(out_dir).expanduser() if out_dir else default_out_dir(app.config)
    wanted = app.config.section("report")["chart"] if chart is None else chart
    lang = lang or language(app.config)
    engine, loaded = app.reading_engine()
    if loaded and on_loaded:
        on_loaded(loaded)
    report = build_report(
        engine,
        day,
        gpu_models=gpu_models,
        providers=providers,
        known_providers=PROVIDERS,
        chart=wanted,
        cheapest=cheapest_for(gpu_models, providers, app.config.section("fx"), scope, lang),
    )
    try:
        files = tuple(write_report(report, ensure_folder(out_dir, "the report", on_created), lang))
        page = write_page(report, out_dir, lang)
    except OSError as err:
        raise write_error(
            f"cannot write the report to {str(out_dir)!r}: {err.strerror or err}",
            err,
            hint=Phrase("choose another folder with {out} or [report] out_dir"),
        ) from None
    drawn = draw_chart(report, out_dir, on_warning)
    if not recipients:
        return ReportOutcome(report, out_dir, files, chart=drawn, page=page)
    from reports.summary import summarise

    try:  # checked after writing, so a settings mistake never costs the nightly files
        settings = smtp_settings(app.config)
        recipients = [check_address(a, "recipient") for a in recipients]
    except UsageError as err:
        raise ReportNotSent(
            f"could not e-mail the report: {err.message}",
            f"{err.hint + '. ' if err.hint else ''}The report is on disk in {out_dir}",
            out_dir,
        ) from None
    png = drawn.path
    cid = new_id(settings.sender) if png else None
    summary = summarise(
        report, files, chart=drawn, chart_cid=cid[1:-1] if cid else None, lang=lang, page=page
    )
    message = compose(
        summary.subject,
        summary.text,
        summary.html,
        settings.sender,
        recipients,
        [*files, page],
        images=[(cid, png)] if cid and png else [],
    )
    try:
        refused = send(message, settings, sleep=sleep, on_retry=on_retry)
    except MailError as err:
        raise ReportNotSent(
            f"could not e-mail the report: {err.message}",
            f"{err.hint}. The report is on disk in {out_dir}",
            out_dir,
        ) from None
    return ReportOutcome(report, out_dir, files, tuple(recipients), refused, drawn, page)


def draw_chart(report: Report, out_dir: Path, on_warning: Callable[[str], None] | None = None) -> Chart:
    """``reports.chart.write_chart``, with any failure turned into a warning and a note."""
    try:
        return write_chart(report, out_dir)
    except Exception as err:  # the chart is an extra: nothing that stops it may cost the CSVs or the e-mail
        reason = why_not_drawn(err)
        if on_warning:
            on_warning(f"the price chart was not drawn: {reason}; the CSV files are complete")
        return Chart(
            note=f"The price chart could not be drawn ({reason}); the CSV files are complete.", failed=True
        )
