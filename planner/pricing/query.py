"""The one filter of the pricing core: which offers a question is about (GPU models with their China
variants, providers, regions, billing modes, spot and vGPU rules, region scope), built and checked once
by ``OfferQuery.build`` and applied by ``planner.pricing.cost.latest_offers``, and the catalog models it
covers (``models``). ``planner.regions`` says which scope a region is in."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from planner import catalog
from planner.billing import SPOT, canonical_billing
from planner.errors import UnknownNameError
from planner.providers import canonical_provider
from planner.regions import region_scope

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog import GpuModel
    from planner.config import Config
    from planner.pricing.offer import Offer


ALL, MAINLAND, OVERSEAS = "all", "mainland", "overseas"
SCOPES: tuple[str, ...] = (ALL, MAINLAND, OVERSEAS)  # ``planner.regions`` says which a region is in
# The scopes a question may cover (``--scope`` and ``[quote] scope``): a team in China asks about the
# mainland or everything; "overseas" names where a region lies, never a question's scope.
CHOSEN_SCOPES: tuple[str, ...] = (MAINLAND, ALL)


SCOPE_WORDS = {MAINLAND: "the mainland", OVERSEAS: "Hong Kong and abroad"}


def scope_words(scope: str) -> str:
    """How a sentence names a scope: "the mainland", "Hong Kong and abroad"."""
    return SCOPE_WORDS.get(scope, scope)


def check_scope(scope: str, given_by: str | None = None) -> str:
    """``scope`` lower-cased, or an UnknownNameError naming ``given_by`` (a config key) when given."""
    cleaned = scope.strip().lower()
    if cleaned not in CHOSEN_SCOPES:  # the hint offers only what --scope and [quote] scope take
        kind = f"scope ({given_by})" if given_by else "scope"
        raise UnknownNameError(
            kind, scope, difflib.get_close_matches(cleaned, CHOSEN_SCOPES) or CHOSEN_SCOPES
        )
    return cleaned


def scope_setting(config: Config) -> str:
    """``[quote] scope`` of ``config``, checked: the scope of every answer that picks offers (quote, plan,
    ``gpus --value``, tco's rental, the report's cheapest table) when the user names none."""
    return check_scope(str(config.section("quote")["scope"]), "[quote] scope in the config")


def chosen_scope(given: str | None, config: Config | None) -> str:
    """The scope a question covers: ``given`` (a ``--scope`` flag, any case) when typed, else ``[quote]
    scope`` of ``config`` (every region without a config)."""
    if given is not None:
        return given.lower()
    return scope_setting(config) if config is not None else ALL


def within(scope: str, provider: str, region: str) -> bool:
    """Whether ``provider``'s ``region`` lies in ``scope`` (``all`` holds every region)."""
    return scope == ALL or region_scope(provider, region) == scope


def cheaper_outside_line(scope: str, offer: Offer, amount: str, how: str) -> str:
    """The one line that names a cheaper option outside ``scope`` (quote, tco and the report write it
    alike): ``A cheaper option outside the mainland: aliyun cn-hongkong ecs.gn6i-c4g1.xlarge on
    on_demand, CNY 789.00 in total (observed 2024-10-09; use --scope all).`` ``amount`` is what it
    costs, ``how`` how to include it (the caller knows whether that is a flag or a setting)."""
    return (
        f"A cheaper option outside {scope_words(scope)}: {offer.provider} {offer.region} "
        f"{offer.instance_type} on {offer.billing}, {amount} (observed {offer.observed_at:%Y-%m-%d}; {how})."
    )


@dataclass(frozen=True)
class OfferQuery:
    """Which offers a question is about; build it with ``OfferQuery.build`` (names checked once)."""

    gpu_models: tuple[str, ...] = ()  # canonical catalog names; () for every model
    variants: frozenset[str] = frozenset()  # those of gpu_models that are China variants of the ask
    providers: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    billing: tuple[str, ...] = ()  # () for every mode but spot
    scope: str = ALL
    vgpu: bool = False  # keep vGPU slices (fewer than one whole GPU per instance)

    @classmethod
    def build(
        cls,
        gpus: Sequence[str] = (),
        providers: Sequence[str] = (),
        regions: Sequence[str] = (),
        billing: Sequence[str] = (),
        *,
        include_variants: bool = False,
        scope: str = ALL,
        vgpu: bool = False,
    ) -> OfferQuery:
        """Canonical names for what a user typed; UnknownNameError (with near names) for a bad one.

        ``gpus`` are families or models ("A100", "A100-80GB"); a China variant of one ("A800" for
        "A100") only with ``include_variants``, unless the name asks for it itself.
        """
        models: dict[str, bool] = {}
        for query in gpus:
            for selection in catalog.resolve_query(query, include_variants=include_variants):
                models[selection.model.name] = models.get(selection.model.name, True) and selection.is_variant
        return cls(
            gpu_models=tuple(m.name for m in catalog.all_models() if m.name in models),
            variants=frozenset(name for name, is_variant in models.items() if is_variant),
            providers=tuple(dict.fromkeys(canonical_provider(p) for p in providers)),
            regions=tuple(dict.fromkeys(r.strip() for r in regions if r.strip())),
            billing=tuple(dict.fromkeys(canonical_billing(b) for b in billing)),
            scope=check_scope(scope),
            vgpu=vgpu,
        )

    def admits(self, offer: Offer) -> bool:
        """The rules SQL does not apply: spot only when asked for, vGPU slices, region scope."""
        if offer.billing == SPOT and SPOT not in self.billing:
            return False
        if offer.is_vgpu and not self.vgpu:
            return False
        return self.in_scope(offer)

    def in_scope(self, offer: Offer) -> bool:
        """Whether the offer's region lies in ``scope``; regions named in ``regions`` are asked for by
        name, so the scope does not hide them (``--region cn-hongkong`` quotes Hong Kong)."""
        return bool(self.regions) or within(self.scope, offer.provider, offer.region)


def models(query: OfferQuery, include_variants: bool = True) -> tuple[list[GpuModel], list[GpuModel]]:
    """(the catalog models ``query`` is about, the China variants it leaves out), each in catalog order.

    A query that names GPUs is about those (built with ``include_variants=True`` it holds their China
    variants too, and these are left out unless ``include_variants``); one that names none is about
    every model, its China variants left out unless ``include_variants``. ``plan`` takes every model a
    query names; ``gpus --value`` ranks China variants only when asked, and names those it left out.
    """
    every = catalog.all_models()
    named = set(query.gpu_models) if query.gpu_models else {m.name for m in every}
    variants = query.variants if query.gpu_models else {m.name for m in every if m.variant_of}
    dropped = set() if include_variants else named & variants
    return [m for m in every if m.name in named - dropped], [m for m in every if m.name in dropped]
