"""``planner report``: dated CSV reports, a web page and a price chart in a folder, optionally e-mailed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from planner import catalog
from planner.commands.emit import emit, note_loaded
from planner.commands.options import (
    format_option,
    gpu_filter_option,
    provider_option,
    scope_option,
)
from planner.errors import PlannerError
from planner.providers import canonical_provider
from planner.views.report import render_report

if TYPE_CHECKING:
    from planner.answers.report import ReportOutcome


@click.command()
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    metavar="DIR",
    help="Folder for the report files (default: [report] out_dir, else 'reports' in the data directory).",
)
@click.option(
    "--email",
    "emails",
    multiple=True,
    is_flag=False,
    flag_value="",
    metavar="[ADDR]",
    help="E-mail the report to ADDR (repeatable); --email alone sends to [email] recipients.",
)
@gpu_filter_option
@provider_option
@click.option("--no-chart", is_flag=True, help="Skip the price chart (as [report] chart = false does).")
@scope_option
@format_option
@click.pass_obj
def report(app, out_dir, emails, gpus, providers, no_chart, scope, fmt) -> None:  # noqa: ANN001
    """Write dated CSV reports, a web page and a price chart and, with --email, send them in one message.

    Five files named after today's date in [schedule] timezone (YYYY-MM-DD_<table>.csv): the latest
    price of every GPU instance and billing mode with CNY per GPU-hour (prices), the cheapest option
    per GPU model (cheapest), price changes since the previous day and week (changes), stock where
    providers report it (availability), and the last refresh of each provider (health). UTF-8 with a
    byte-order mark for Excel; text cells that would run as formulas start with a quote.

    The cheapest file and the chart cover mainland China regions unless --scope all (or [quote]
    scope), as quote does: its scope column, the e-mail and the answer say so, and name each GPU model
    with a cheaper option outside in one line.

    And a chart, YYYY-MM-DD_cheapest_trend.png: each day's cheapest on-demand CNY per GPU-hour of the
    GPU models in the cheapest file (the 8 with the most offers), over the 30 days to the newest
    price. Not drawn with --no-chart or [report] chart = false, nor without an on-demand price; if it
    cannot be drawn, a warning says why and everything else is written and sent as usual.

    And a web page, YYYY-MM-DD_report.html, in the team's language (planner --lang, [locale] language): the
    cheapest option per GPU model, a price chart per model, stock, the changes and each provider's
    last refresh on one self-contained page (nothing fetched when it is opened).

    The e-mail (a text and HTML summary with the chart inline, the CSV files and the web page
    attached) goes through
    [email] smtp_host; the password comes from PLANNER_SMTP_PASSWORD only. If it cannot be sent the
    files stay on disk and the exit code is 1.

    \b
    Examples:
      planner report
      planner report --out ./reports --gpu A100 --gpu H800
      planner report --scope all           # cheapest options in Hong Kong and abroad too
      planner report --email               # to [email] recipients
      planner report --email ops@example.com --email ml@example.com --format json
    """
    # The report pipeline loads the mail stack (smtplib, ssl): here, not for `report --help`.
    from planner.answers.report import ReportNotSent, produce_report, recipients_for
    from planner.smtp import smtp_settings

    models: list[str] = []
    for query in gpus:
        models.extend(s.model.name for s in catalog.resolve_query(query, False))
    names = [canonical_provider(p) for p in providers]
    recipients = recipients_for(emails, app.config)
    if recipients:
        smtp_settings(app.config)  # a settings mistake stops us before any work

    def retrying(attempt: int, err: Any, wait_s: float) -> None:
        click.echo(f"E-mail attempt {attempt} failed: {err.message}; retrying in {wait_s:g} s.", err=True)

    try:
        outcome = produce_report(
            app,
            out_dir=Path(out_dir) if out_dir else None,
            recipients=recipients,
            gpu_models=list(dict.fromkeys(models)),
            providers=list(dict.fromkeys(names)),
            on_retry=retrying,
            on_loaded=note_loaded,
            on_created=lambda line: click.echo(line, err=True),
            chart=False if no_chart else None,
            on_warning=lambda line: click.echo(f"Warning: {line}.", err=True),
            scope=scope,
        )
    except ReportNotSent as err:
        click.echo(f"Report written to {err.out_dir}; the e-mail was not sent.", err=True)
        raise
    _show(outcome, fmt)
    if outcome.refused:
        refused = ", ".join(f"{a} ({code})" for a, (code, _) in outcome.refused.items())
        delivered = [a for a in outcome.recipients if a not in outcome.refused]
        raise PlannerError(
            f"the server refused some recipients: {refused}; the report went to {', '.join(delivered)}",
            hint="check those addresses",
        )


def _show(outcome: ReportOutcome, fmt: str) -> None:
    emit(
        outcome.to_dict(),
        fmt,
        table=lambda _: render_report(outcome),
        csv=lambda d: (d["files"], ("table", "path", "rows")),
    )
