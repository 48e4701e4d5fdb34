"""GPUs some providers rent only on application (a ticket, a whitelist, an invitation), with no public price.

The data is ``planner/data/on_application.csv``: one row per provider, catalog GPU model and instance
family where known, the provider's wording (``wording_zh`` as published, empty where no capture kept the
Chinese words; ``wording_en`` always), its source and the day it was observed. ``for_models`` gives the
entries for the GPU models a question is about; ``quote`` lists them after the priced options and
``gpus`` names the providers, never as a price or a recommendation.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources

from planner.catalog import get_model
from planner.providers import PROVIDERS

COLUMNS = ("provider", "gpu_model", "instance_family", "wording_zh", "wording_en", "source", "observed")


@dataclass(frozen=True)
class OnApplication:
    """One provider renting one GPU model only on application."""

    provider: str
    gpu_model: str  # a catalog name (planner/data/gpus.csv)
    instance_family: str | None  # None where the source names none
    wording_zh: str | None  # the provider's words as published; None where they were not captured
    wording_en: str
    source: str
    observed: dt.date

    @property
    def wording(self) -> str:
        """The provider's words for people: the Chinese as published (where kept), then English."""
        return f"{self.wording_zh} ({self.wording_en})" if self.wording_zh else self.wording_en

    def to_dict(self) -> dict[str, object]:
        return {
            "provider": self.provider,
            "gpu_model": self.gpu_model,
            "instance_family": self.instance_family,
            "wording_zh": self.wording_zh,
            "wording_en": self.wording_en,
            "source": self.source,
            "observed": self.observed.isoformat(),
        }


def _entry(row: dict[str, str], line: int) -> OnApplication:
    where = f"on_application.csv line {line}"
    if tuple(row) != COLUMNS:
        raise ValueError(f"{where}: columns {tuple(row)} are not {COLUMNS}")
    if row["provider"] not in PROVIDERS:
        raise ValueError(f"{where}: provider {row['provider']!r} is not one of {PROVIDERS}")
    try:
        get_model(row["gpu_model"])
    except KeyError:
        raise ValueError(f"{where}: {row['gpu_model']!r} is not a catalog GPU model") from None
    if not row["wording_en"].strip() or not row["source"].strip():
        raise ValueError(f"{where}: an entry needs the provider's wording and its source")
    return OnApplication(
        provider=row["provider"],
        gpu_model=row["gpu_model"],
        instance_family=row["instance_family"].strip() or None,
        wording_zh=row["wording_zh"].strip() or None,
        wording_en=row["wording_en"].strip(),
        source=row["source"].strip(),
        observed=dt.date.fromisoformat(row["observed"]),
    )


@functools.cache
def entries() -> tuple[OnApplication, ...]:
    """Every entry of the table, checked (known provider, catalog GPU model, wording, source, date)."""
    text = resources.files("planner").joinpath("data/on_application.csv").read_text(encoding="utf-8")
    return tuple(_entry(row, n) for n, row in enumerate(csv.DictReader(text.splitlines()), start=2))


def for_models(models: Iterable[str], providers: Iterable[str] = ()) -> tuple[OnApplication, ...]:
    """The entries for these catalog GPU models (in table order), of these providers only when named."""
    wanted, among = set(models), set(providers)
    return tuple(e for e in entries() if e.gpu_model in wanted and (not among or e.provider in among))


def for_gpu(model: str) -> tuple[OnApplication, ...]:
    """The entries for one catalog GPU model (``for_gpu("H800-80GB")``); empty when none is known."""
    return for_models([model])


def providers_for(model: str) -> tuple[str, ...]:
    """The providers renting ``model`` on application, each once, in table order."""
    return tuple(dict.fromkeys(e.provider for e in for_gpu(model)))
