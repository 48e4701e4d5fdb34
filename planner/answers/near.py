"""What a price query that matched nothing would match if loosened one way: the stored China variants
of the GPUs asked for (H800 for H100) and the stored regions a region asked for names (``cn-beijing``
for ``beijing`` or ``北京``). ``prices``, ``quote`` and ``plan`` give the same hints from here
(``planner.views.notes.no_match_line`` words them with each command's flags)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planner import catalog
from planner.pricing.query import OfferQuery
from planner.regions import latin_region


@dataclass(frozen=True)
class NearMatch:
    """What a query that matched nothing would match if loosened one way."""

    variants: tuple[str, ...] = ()  # stored China variants of the GPUs asked for (H800 for H100)
    regions: tuple[str, ...] = ()  # stored regions a region asked for is part of (cn-beijing for beijing)

    def to_dict(self) -> dict[str, list[str]]:
        return {"variants": list(self.variants), "regions": list(self.regions)}


def would_match(conn: Any, query: OfferQuery) -> NearMatch:
    """The stored China variants of a query's GPUs (unless it includes them already), and the stored
    regions its region names are part of, each with the query's other filters."""
    from db.queries import latest_prices

    def any_price(models: Any = None, regions: Any = None) -> list[Any]:
        return latest_prices(
            conn,
            models if models is not None else (list(query.gpu_models) or None),
            list(query.providers) or None,
            regions if regions is not None else (list(query.regions) or None),
            list(query.billing) or None,
        )

    variants: list[str] = []
    if query.gpu_models:
        wanted = _variants_of(query.gpu_models) - set(query.gpu_models)
        variants = sorted({p.gpu_model for p in any_price(models=sorted(wanted))}) if wanted else []
    regions: list[str] = []
    if query.regions:
        stored = sorted({p.region for p in any_price(regions=[])})  # [] is no region filter
        asked = [latin_region(q).lower() for q in query.regions]
        regions = [r for r in stored if r not in query.regions and any(q and q in r.lower() for q in asked)]
    return NearMatch(tuple(variants), tuple(regions[:5]))


def _variants_of(models: tuple[str, ...]) -> set[str]:
    wanted = set(models)
    out: set[str] = set()
    for model in catalog.all_models():
        base = getattr(model, "variant_of", None)
        if base and base in wanted:
            out.add(model.name)
    return out
