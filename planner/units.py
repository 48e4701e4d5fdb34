"""Counts with SI-style suffixes: parse ``7B``, ``6.7e9``, ``1.4T``, ``1,000`` and format them back.

``parse_count("65.2B") == 65_200_000_000``. Parsing goes through ``Decimal`` so ``65.2B`` is exact,
not ``65199999999.99999``. The suffixes are the ones ML papers use for parameters and tokens:
K = 1e3, M = 1e6, B (or G) = 1e9, T = 1e12, case-insensitive.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

from planner.errors import UsageError

BYTES_PER_GB = 10**9  # GB as marketed on GPUs and in the catalog (decimal)
BYTES_PER_GIB = 2**30  # GiB, what the KV-cache tables in workloads.md §2.5 use

# The most GPUs one job may ask for, in every command (quote, plan, tco, estimate).
MAX_GPUS = 50_000  # above the largest published training runs rented in one place (MegaScale: 12,288)
MAX_COUNT = 10**30  # beyond any count a person means; keeps later float arithmetic finite
SUFFIXES: dict[str, int] = {"k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}

# The smallest positive value any option or file number can mean: below it a count, an hour or a
# fraction is a typo (1e-20, 5e-324) and only overflows what is computed from it.
MIN_POSITIVE = Decimal("0.000001")

_EXAMPLES = "e.g. 7B, 6.7e9, 500M, 1.4T or 1,000"
# A number as people write it, ASCII digits only: plain, decimal or scientific, or with thousands
# separated by one kind of separator (, or _) in groups of three. Not 8,68 (a decimal comma), not 3_0,
# not Arabic-Indic or full-width digits (which int(), float() and Decimal() all accept).
_PLAIN = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_GROUPED = r"[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?|[0-9]{1,3}(?:_[0-9]{3})+(?:\.[0-9]+)?"
_DECIMAL = re.compile(rf"(?P<sign>[+-]?)\s*(?P<num>{_PLAIN}|{_GROUPED})", re.ASCII)
_SUFFIXED = re.compile(
    rf"(?P<sign>[+-]?)\s*(?P<num>{_PLAIN}|{_GROUPED})\s*(?P<suffix>[kmbgt])?", re.ASCII | re.I
)


def parse_count(text: str | int | float, name: str = "value") -> int | float:
    """Parse a positive count: ``"7B"`` -> 7_000_000_000; ``"0.5"`` -> 0.5.

    Returns an ``int`` when the value is a whole number, else a ``float``. Raises UsageError naming
    ``name`` for negative, zero, NaN, infinite or unreadable input.
    """
    raw = str(text).strip()
    value = _to_decimal(raw)
    if value is None:
        raise UsageError(f"{name} {str(text)!r} is not a number", f"give a positive count, {_EXAMPLES}")
    if not value.is_finite():
        raise UsageError(f"{name} {str(text)!r} is not finite", f"give a positive count, {_EXAMPLES}")
    if value <= 0:
        raise UsageError(f"{name} must be positive, got {str(text)!r}", f"give a positive count, {_EXAMPLES}")
    if value < MIN_POSITIVE:
        raise UsageError(
            f"{name} {str(text)!r} is too small to mean anything (at least {MIN_POSITIVE})",
            f"give a positive count, {_EXAMPLES}",
        )
    if value > MAX_COUNT:
        raise UsageError(f"{name} {str(text)!r} is far too large", f"give a count such as {_EXAMPLES}")
    if value == value.to_integral_value():
        return int(value)
    return float(value)


def parse_positive_int(text: str | int, name: str = "value") -> int:
    """Parse a positive whole count such as a sequence length (``"4K"`` -> 4000, ``"4096"`` -> 4096)."""
    value = parse_count(text, name)
    if not isinstance(value, int):
        raise UsageError(f"{name} must be a whole number, got {str(text)!r}", "e.g. 4096 or 8")
    return value


def parse_decimal(text: object) -> Decimal | None:
    """``text`` as a Decimal if it is a number as people write it (see ``_DECIMAL``), else None.

    ``"1,234.5"`` -> 1234.5, ``"-2e3"`` -> -2000, ``"nan"``/``"inf"`` -> NaN/Infinity (the caller refuses
    them by name); ``"8,68"``, ``"3_0"``, ``"٣"``, ``"1.2.3"`` -> None. The one number parser of the
    planner: options, imported files and provider prices all come through it.
    """
    raw = str(text).strip()
    if raw.isascii() and "," not in raw and "_" not in raw:
        # The usual case, at import speed: Decimal's own grammar over ASCII is the plain form above
        # (plus NaN and Infinity, which the caller refuses by name).
        try:
            return Decimal(raw)
        except InvalidOperation:
            return None
    match = _DECIMAL.fullmatch(raw)
    if match is None:
        return None
    return _signed(match)


_NOT_FINITE = frozenset({"nan", "inf", "infinity"})


def _signed(match: re.Match[str]) -> Decimal:
    number = Decimal(match["num"].replace(",", "").replace("_", ""))
    return -number if match["sign"] == "-" else number


def _to_decimal(raw: str) -> Decimal | None:
    """A count with an optional suffix: ``"6.5B"`` -> 6500000000."""
    if raw.lower().lstrip("+-") in _NOT_FINITE:
        return Decimal(raw)
    match = _SUFFIXED.fullmatch(raw)
    if match is None:
        return None
    suffix = (match["suffix"] or "").lower()
    return _signed(match) * SUFFIXES.get(suffix, 1)


def format_count(value: float) -> str:
    """Format a count with one decimal and a suffix: 7e9 -> ``7.0B``, 2e12 -> ``2.0T``, 512 -> ``512``."""
    for suffix, scale in (("T", 10**12), ("B", 10**9), ("M", 10**6), ("K", 10**3)):
        if abs(value) >= scale:
            return f"{value / scale:.1f}{suffix}"
    return f"{value:g}"


def format_flops(value: float) -> str:
    """Format a FLOP count in short scientific notation: 8.4e22 -> ``8.4e22``."""
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def bytes_to_gb(n_bytes: float) -> float:
    """Bytes to decimal GB (1e9), the unit of ``memory_gb`` everywhere in the planner."""
    return n_bytes / BYTES_PER_GB
