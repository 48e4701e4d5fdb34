"""Options several commands share, as decorators."""

from __future__ import annotations

import click

from planner.output import FORMATS
from planner.pricing.query import CHOSEN_SCOPES
from planner.pricing.recent import PRICE_BASES
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


def _one_gpu(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> str | None:
    """One --gpu, never "the last one wins": a second is a usage error naming both."""
    if len(value) > 1:
        raise click.BadParameter(
            f"this command takes one GPU, got {', '.join(repr(v) for v in value)}; "
            "run it once per GPU (plan, prices, report and export take several)",
            ctx=ctx,
            param=param,
        )
    return value[0] if value else None


def single_gpu_option(help: str, required: bool = True, dest: str = "gpu"):  # noqa: ANN201, A002 - click
    """``--gpu`` for a command about one GPU: spelled as everywhere, refused when given twice."""
    return click.option(
        "--gpu",
        dest,
        multiple=True,  # so a second --gpu is seen and refused, not silently taking the first's place
        required=required,
        metavar="GPU",
        callback=_one_gpu,
        help=help,
    )


def price_basis_option(default_help: str):  # noqa: ANN201 - a click decorator
    """``--price-basis``: one of planner.pricing.recent.PRICE_BASES (any case); the default is the config's."""
    return click.option(
        "--price-basis",
        type=click.Choice(PRICE_BASES, case_sensitive=False),
        metavar="BASIS",
        help=f"{default_help} ({'|'.join(PRICE_BASES)}).",
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
    type=click.Choice(CHOSEN_SCOPES, case_sensitive=False),
    help="Regions covered: mainland China, or all (Hong Kong and abroad too). Default: [quote] scope "
    "(mainland).",
)
