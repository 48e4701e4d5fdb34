"""Options several commands share, as decorators."""

from __future__ import annotations

import click

from planner.output import FORMATS
from planner.providers import PROVIDERS

format_option = click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS, case_sensitive=False),
    default="table",
    show_default=True,
    help="table for people; json or csv for programs.",
)
gpu_filter_option = click.option(
    "--gpu",
    "gpus",
    multiple=True,
    metavar="GPU",
    help="GPU family or model, e.g. A100, A100-80GB, 4090 (repeatable).",
)
provider_option = click.option(
    "--provider",
    "providers",
    multiple=True,
    metavar="NAME",
    help=f"{', '.join(PROVIDERS[:-1])} or {PROVIDERS[-1]} (repeatable).",
)
region_option = click.option(
    "--region",
    "regions",
    multiple=True,
    metavar="REGION",
    help="Only this region, e.g. cn-beijing (repeatable).",
)
billing_option = click.option(
    "--billing",
    "billing",
    multiple=True,
    metavar="MODE",
    help="on_demand, spot, daily, weekly, monthly or yearly (repeatable).",
)
variants_option = click.option(
    "--include-variants",
    is_flag=True,
    help="Also show China variants (A800 for A100, H800 for H100, RTX4090D for RTX4090, ...), labelled.",
)
verbose_option = click.option(
    "-v",
    "--verbose",
    is_flag=True,
    help="Print each HTTP request (method, URL, status, bytes, time) to standard error, secrets removed.",
)
scope_option = click.option(
    "--scope",
    type=click.Choice(("mainland", "all"), case_sensitive=False),
    help="Regions covered: mainland China, or all (Hong Kong and abroad too). Default: [quote] scope "
    "(mainland).",
)


def chosen_scope(app, scope: str | None) -> str:  # noqa: ANN001 - the click context's App
    """``--scope`` when given, else ``[quote] scope`` of the config (the one place its default lives)."""
    from planner.offer_query import check_scope

    if scope is not None:
        return scope.lower()
    return check_scope(str(app.config.section("quote")["scope"]), "[quote] scope in the config")
