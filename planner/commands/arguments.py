"""What ``estimate``, ``plan`` and ``tco`` share on the command line: option types for the numbers people
type (counts with suffixes such as ``7B`` and ``50K``, plain decimals). Names (GPUs, providers, billing
modes) are checked once, by ``planner.pricing.cost.OfferQuery.build``.

A value that is not a number, or a name we do not know, is one line with a hint (exit 2), before any
database work.
"""

from __future__ import annotations

from typing import Any

import click

from planner.errors import UsageError
from planner.units import MIN_POSITIVE, parse_count, parse_decimal


class Count(click.ParamType):
    """A count with an optional suffix (``7B``, ``6.7e9``, ``50K``); whole numbers only if ``whole``."""

    name = "count"

    def __init__(self, example: str, whole: bool = False):
        self.example = example
        self.whole = whole

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        flag = param.opts[0] if param is not None else "value"
        try:
            number = parse_count(value, flag)
        except UsageError as err:
            raise UsageError(err.message, f"e.g. {flag} {self.example}") from None
        if self.whole and not isinstance(number, int):
            raise UsageError(f"{flag} must be a whole number, got {value!r}", f"e.g. {flag} {self.example}")
        return number


class Number(click.ParamType):
    """A finite decimal number (``0.4``, ``1.5``); ranges are checked by the library."""

    name = "number"

    def __init__(self, example: str):
        self.example = example

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        flag = param.opts[0] if param is not None else "value"
        number = parse_decimal(value)
        if number is None:
            raise UsageError(f"{flag} {value!r} is not a number", f"e.g. {flag} {self.example}")
        if not number.is_finite():
            raise UsageError(f"{flag} {value!r} is not finite", f"e.g. {flag} {self.example}")
        if number and abs(number) < MIN_POSITIVE:
            raise UsageError(
                f"{flag} {value!r} is too small to mean anything (at least {MIN_POSITIVE})",
                f"e.g. {flag} {self.example}",
            )
        return number
