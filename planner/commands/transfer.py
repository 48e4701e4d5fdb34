"""``planner import`` and ``planner export``: prices in and out as CSV, in one format."""

from __future__ import annotations

import sys

import click

from planner.commands.options import format_option, gpu_filter_option, provider_option
from planner.output import dumps_json


@click.command("import")
@click.argument("file", metavar="FILE.csv")
@format_option
@click.pass_obj
def import_cmd(app, file: str, fmt: str) -> None:  # noqa: ANN001
    """Import prices from a CSV file, all or nothing.

    Columns (header row, any order): provider, region, instance_type, gpu_model, gpu_count, billing,
    price, currency, observed_at; optional vcpus, memory_gb, source. `price` is the whole instance's
    price for one unit of `billing` (on_demand and spot per hour; daily, weekly, monthly, yearly per
    period). One bad row and nothing is stored; the error names its line (the header is line 1).
    Importing the same file twice adds nothing.

    \b
    Example:
      planner import prices.csv
    """
    from planner.importer import import_csv

    result = import_csv(app.engine(), file, app.config.section("fx"))
    if fmt == "json":
        click.echo(dumps_json(result.__dict__))
        return
    summary = (
        f"Imported {file}: {result.rows} row(s), {result.stored} new price(s), "
        f"{result.already_present} already present, {result.changed} changed, {result.instances} instance(s)."
    )
    if fmt == "csv":
        from planner.output import csv_text

        click.echo(csv_text([result.__dict__], list(result.__dict__)), nl=False)
    else:
        click.echo(summary)


@click.command("export")
@click.option(
    "--out",
    "out",
    type=click.Path(dir_okay=False, writable=True),
    help="Write to this file (default: standard output).",
)
@gpu_filter_option
@provider_option
@click.pass_obj
def export_cmd(app, out: str | None, gpus: tuple[str, ...], providers: tuple[str, ...]) -> None:  # noqa: ANN001
    """Export every stored price observation as CSV, in the import format.

    \b
    Examples:
      planner export --out prices.csv
      planner export --gpu H800 --provider autodl
    """
    import csv

    from db.queries import export_rows
    from planner import catalog
    from planner.importer import COLUMNS
    from planner.output import to_jsonable
    from planner.providers import canonical_provider

    models = [s.model.name for q in gpus for s in catalog.resolve_query(q)]
    names = [canonical_provider(p) for p in providers]
    engine = app.engine()
    fh = open(out, "w", encoding="utf-8", newline="") if out else sys.stdout  # noqa: SIM115
    try:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(COLUMNS)
        count = 0
        with engine.connect() as conn:
            for row in export_rows(conn, models or None, names or None):
                values = list(row)
                values[4] = f"{values[4]:g}"
                values[6] = to_jsonable(values[6])
                values[8] = values[8].isoformat()
                writer.writerow(["" if v is None else v for v in values])
                count += 1
    finally:
        if out:
            fh.close()
    if out:
        click.echo(f"Exported {count} price observation(s) to {out}.", err=True)
