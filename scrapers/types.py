"""Small records shared by the registry and every provider module (kept apart to avoid import cycles)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Literal

from scrapers.base import ScrapeError


@dataclass(frozen=True)
class ProviderSettings:
    """What the pipeline hands a scraper: config values plus credentials read from the environment.

    ``regions`` empty means the provider's default set. ``options`` holds provider-specific settings
    (documented on each scraper class). ``credentials`` maps env var name to value; it is never logged.
    """

    enabled: bool = True
    base_url: str | None = None
    regions: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
    credentials: Mapping[str, str] = field(default_factory=dict, repr=False)


@dataclass(frozen=True)
class ProviderMode:
    """What ``planner providers`` shows: the mode, whether credentials are present (never their values)."""

    mode: Literal["public", "account"]
    credentials_present: bool
    sees: str  # one sentence: what this mode can and cannot see
    unlock_env: tuple[str, ...] = ()  # env vars to set to see more (empty when already in account mode)


@dataclass(frozen=True)
class Issue:
    """A problem that did not stop the run.

    ``region_failed``: one region (or zone) could not be read; the run becomes ``partial``.
    ``skipped``: one instance type could not be priced honestly (unknown GPU count or model); counted.
    ``warning``: the data is whole but worth a line in the summary (e.g. a remembered price-file version).
    ``note``: information only, nothing was lost (e.g. "no AUTODL_TOKEN: only the GPU list was read"); the
    refresh summary prints it so a run with zero offers says why.
    """

    kind: Literal["region_failed", "skipped", "warning", "note"]
    message: str
    region: str | None = None
    instance_type: str | None = None


def to_price(value: Any, where: str, *, strings_ok: bool = False) -> Decimal:
    """A provider price as Decimal (0 allowed: callers treat it as "not sold"); junk is a ScrapeError.

    Floats go through ``str`` so 8.68 stays 8.68. Strings are accepted only where the provider documents
    them (Aliyun's CDN file); a negative, NaN or infinite price is never accepted.
    """
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ScrapeError(f"{where}: price {value!r} is not a number")
    if isinstance(value, str) and not strings_ok:
        raise ScrapeError(f"{where}: price {value!r} is a string, expected a number")
    try:
        price = Decimal(str(value).strip())
    except InvalidOperation:
        raise ScrapeError(f"{where}: price {value!r} is not a number") from None
    if not price.is_finite() or price < 0:
        raise ScrapeError(f"{where}: price {value!r} is negative or not finite")
    return price


class ItemSkipped(ScrapeError):
    """One item of an otherwise good answer cannot be read honestly: the caller counts it as skipped.

    A subclass of ScrapeError so that, should it ever escape, the parser contract still holds.
    """


def optional_price(value: Any, where: str) -> Decimal | None:
    """A price field the provider documents as nullable: None when null or absent, else a Decimal.

    Numbers and numeric strings ("120.00", as some official examples carry them) are read alike;
    anything else (a word, a negative or non-finite figure, a bool) raises :class:`ItemSkipped`.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        return to_price(value, where, strings_ok=True)
    except ItemSkipped:
        raise
    except ScrapeError as exc:
        raise ItemSkipped(str(exc)) from None


def optional_number(value: Any, where: str, *, limit: float = 1e9) -> float | None:
    """A count or size documented as a number: None when null/absent/empty, a float when a number or
    numeric string from 0 to ``limit``; anything else raises :class:`ItemSkipped`."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise ItemSkipped(f"{where} {str(value)[:20]!r} is not a number")
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise ItemSkipped(f"{where} {str(value)[:20]!r} is not a number") from None
    if not 0 <= number <= limit:  # NaN fails this too
        raise ItemSkipped(f"{where} {str(value)[:20]!r} is out of range")
    return number
