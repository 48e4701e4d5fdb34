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
MAX_GPUS = 100_000
MAX_COUNT = 10**30  # beyond any count a person means; keeps later float arithmetic finite
SUFFIXES: dict[str, int] = {"k": 10**3, "m": 10**6, "b": 10**9, "g": 10**9, "t": 10**12}

_EXAMPLES = "e.g. 7B, 6.7e9, 500M, 1.4T or 1,000"
# A number (plain, decimal or scientific), optionally followed by one suffix.
_NUMBER = re.compile(r"^(?P<num>(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?)\s*(?P<suffix>[kmbgt])?$", re.IGNORECASE)
_THOUSANDS = re.compile(r"^\d{1,3}(,\d{3})+(\.\d+)?(?![\d,])")


def parse_count(text: str | int | float, name: str = "value") -> int | float:
    """Parse a positive count: ``"7B"`` -> 7_000_000_000; ``"0.5"`` -> 0.5.

    Returns an ``int`` when the value is a whole number, else a ``float``. Raises UsageError naming
    ``name`` for negative, zero, NaN, infinite or unreadable input.
    """
    raw = str(text).strip()
    value = _to_decimal(raw.replace("_", ""))
    if value is None:
        raise UsageError(f"{name} {str(text)!r} is not a number", f"give a positive count, {_EXAMPLES}")
    if not value.is_finite():
        raise UsageError(f"{name} {str(text)!r} is not finite", f"give a positive count, {_EXAMPLES}")
    if value <= 0:
        raise UsageError(f"{name} must be positive, got {str(text)!r}", f"give a positive count, {_EXAMPLES}")
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


def _to_decimal(raw: str) -> Decimal | None:
    if raw.lower() in {"nan", "inf", "+inf", "-inf", "infinity", "-infinity"}:
        return Decimal(raw)
    sign = 1
    if raw.startswith(("-", "+")):
        sign = -1 if raw[0] == "-" else 1
        raw = raw[1:].lstrip()
    if "," in raw:
        grouped = _THOUSANDS.match(raw)
        if grouped is None:
            return None
        raw = raw[: grouped.end()].replace(",", "") + raw[grouped.end() :]
    match = _NUMBER.match(raw)
    if match is None:
        return None
    try:
        number = Decimal(match["num"])
    except InvalidOperation:  # pragma: no cover - the regex admits only valid literals
        return None
    suffix = (match["suffix"] or "").lower()
    return sign * number * SUFFIXES.get(suffix, 1)


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
