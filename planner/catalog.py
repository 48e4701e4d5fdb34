"""GPU vocabulary: the one place that names GPU models, their specs and the names providers use for them.

The data is ``planner/data/gpus.csv`` (one row per canonical model, specs and purchase prices with their
sources), loaded on first use. ``canonical_name`` turns any spelling ("NVIDIA A100 80GB", "A100-SXM4-80GB",
"RTX 4090D", "Tesla T4") into a canonical name such as ``A100-80GB``; ``resolve_query`` says which models a
user's ``--gpu`` means. Unknown names raise ``UnknownNameError`` with near matches; a family with several
memory sizes and no memory figure raises ``UsageError``. ``interconnect_label`` names how a model's GPUs talk
("NVLink 600 GB/s", "NVLink (cut) 400 GB/s", "PCIe only", "unknown"). ``rental_rank`` orders models the
way a report lists them: the GPUs teams rent first (``gpu_group`` and ``family_rank``).
"""

from __future__ import annotations

import csv
import datetime as dt
import difflib
import functools
import re
from dataclasses import dataclass
from decimal import Decimal
from importlib import resources

from planner.errors import UnknownNameError, UsageError
from planner.wording import Phrase

ESTIMATE_MIDPOINT = "estimate midpoint"  # a purchase figure that is the middle of an estimate band
PURCHASE_PRICE_STALE_DAYS = 365  # an older catalog purchase price is warned about: GPU prices move

# What a team rents a card for, in the order a report lists the groups (gpus.csv's gpu_group): data-centre
# cards of the Ampere generation and later, then current GeForce (RTX 40 and 50 series), then the rest
# (workstation cards, older GeForce, pre-Ampere data-centre cards). A judgement of the market, not a spec:
# so a column, decided for each row added, rather than guessed from a name or a figure (an RTX PRO 6000
# and an RTX 5090 are both Blackwell RTX cards; a V100 is a data-centre card nobody plans around now).
GPU_GROUPS: tuple[str, ...] = ("datacenter", "geforce_current", "other")


@dataclass(frozen=True)
class GpuModel:
    """One canonical GPU model (``A100-80GB``) with its specs; unknown figures are None, never guessed."""

    name: str
    family: str
    variant_of: str | None
    memory_gb: float
    memory_type: str | None
    bandwidth_gbps: float | None
    fp32_tflops: float | None
    dense_tflops: float | None  # dense BF16 (FP16 where the GPU has no BF16), FP32 accumulate
    has_bf16: bool
    tdp_watts: float | None
    interconnect: str | None  # as the reference states it: "NVLink3 via NVSwitch; PCIe Gen4"
    nvlink_gbps_bidir: float | None  # NVLink per GPU, both directions; None where the card has none
    purchase_price_cny: Decimal | None
    purchase_price_usd: Decimal | None
    purchase_price_date: str | None
    purchase_price_source: str | None
    # How the figure was obtained: "observed" (a price seen: a quote, a listing, a sale), "estimate
    # midpoint" (the middle of an estimate band, not an observed price) or "list price" (launch or
    # MSRP); and how far to trust it: "high", "medium" or "low".
    purchase_price_obtained: str | None
    purchase_price_confidence: str | None
    spec_source: str | None
    china_note: str | None
    aliases: tuple[str, ...]
    gpu_group: str  # one of GPU_GROUPS
    # The family's place in a report's ranking, across groups (1 first: H20, then H800, ...): newest and
    # most rented first within a group; every size of a family has its family's rank.
    family_rank: int


@dataclass(frozen=True)
class Selection:
    """A model picked by ``resolve_query``; ``is_variant`` when only ``include_variants`` brought it in."""

    model: GpuModel
    is_variant: bool


# Words that say how a card is packaged, sold or built, not which card it is ("NVIDIA H100 80GB HBM3" is
# how nvidia-smi names an H100 SXM).
_NOISE = frozenset(
    {"nvidia", "tesla", "geforce", "gpu", "sxm", "sxm2", "sxm3", "sxm4", "sxm5", "pcie", "nvlink"}
    | {"hbm2", "hbm2e", "hbm3", "hbm3e"}
)
# "80GB", "80G", "80 GiB", "79.6GB": a memory figure needs its unit, so "A100 40/80GB" keeps its "40".
_MEMORY_RE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*(?:gib|gb|g)(?![a-z0-9])")


@dataclass(frozen=True)
class _Catalog:
    models: tuple[GpuModel, ...]
    by_name: dict[str, GpuModel]
    by_family: dict[str, tuple[GpuModel, ...]]
    family_keys: dict[str, str]  # normalised spelling -> family


def _parse(raw: str) -> tuple[str, float | None]:
    """Split a GPU name into a family key ("a100", "rtx4090d") and the memory figure it names, if any."""
    text = raw.casefold()
    memory = None
    match = _MEMORY_RE.search(text)
    if match:
        memory = float(match.group(1))
        text = text[: match.start()] + " " + text[match.end() :]
    tokens = [t for t in re.split(r"[^a-z0-9]+", text) if t and t not in _NOISE]
    return "".join(tokens), memory


def _opt_float(value: str) -> float | None:
    return float(value) if value else None


def _opt_decimal(value: str) -> Decimal | None:
    return Decimal(value) if value else None


def _model_from_row(row: dict[str, str]) -> GpuModel:
    return GpuModel(
        name=row["name"],
        family=row["family"],
        variant_of=row["variant_of"] or None,
        memory_gb=float(row["memory_gb"]),
        memory_type=row["memory_type"] or None,
        bandwidth_gbps=_opt_float(row["bandwidth_gbps"]),
        fp32_tflops=_opt_float(row["fp32_tflops"]),
        dense_tflops=_opt_float(row["bf16_fp16_dense_tflops"]),
        has_bf16=row["has_bf16"] == "true",
        tdp_watts=_opt_float(row["tdp_watts"]),
        interconnect=row["interconnect"] or None,
        nvlink_gbps_bidir=_opt_float(row["nvlink_gbps_bidir"]),
        purchase_price_cny=_opt_decimal(row["purchase_price_cny"]),
        purchase_price_usd=_opt_decimal(row["purchase_price_usd"]),
        purchase_price_date=row["purchase_price_date"] or None,
        purchase_price_source=row["purchase_price_source"] or None,
        purchase_price_obtained=row["purchase_price_obtained"] or None,
        purchase_price_confidence=row["purchase_price_confidence"] or None,
        spec_source=row["spec_source"] or None,
        china_note=row["china_note"] or None,
        aliases=tuple(a for a in row["aliases"].split("|") if a),
        gpu_group=row["gpu_group"],
        family_rank=int(row["family_rank"]),
    )


@functools.cache
def _catalog() -> _Catalog:
    text = resources.files("planner").joinpath("data/gpus.csv").read_text(encoding="utf-8")
    models = tuple(_model_from_row(row) for row in csv.DictReader(text.splitlines()))
    by_family: dict[str, list[GpuModel]] = {}
    for model in models:
        by_family.setdefault(model.family, []).append(model)
    _check_ranking(by_family)
    family_keys: dict[str, str] = {}

    def add_key(key: str, family: str) -> None:
        if family_keys.setdefault(key, family) != family:
            raise ValueError(f"gpus.csv: {key!r} names both {family_keys[key]} and {family}")

    for model in models:
        key = _parse(model.family)[0]
        add_key(key, model.family)
        if key.startswith("rtx"):  # people say "4090" and "A6000" as often as "RTX 4090"
            add_key(key[3:], model.family)
        for alias in model.aliases:
            add_key(_parse(alias)[0], model.family)
    return _Catalog(
        models=models,
        by_name={m.name: m for m in models},
        by_family={f: tuple(ms) for f, ms in by_family.items()},
        family_keys=family_keys,
    )


def _check_ranking(by_family: dict[str, list[GpuModel]]) -> None:
    """Every family has one group of GPU_GROUPS and one rank of its own, and the ranks run group by group
    (a rank says where a family stands in the whole report, so it may not contradict its group)."""
    ranked: list[tuple[int, int, str]] = []
    for family, models in by_family.items():
        if len({(m.gpu_group, m.family_rank) for m in models}) != 1:
            raise ValueError(f"gpus.csv: the sizes of {family} disagree on gpu_group or family_rank")
        if models[0].gpu_group not in GPU_GROUPS:
            raise ValueError(
                f"gpus.csv: {family}'s gpu_group {models[0].gpu_group!r} is not one of {GPU_GROUPS}"
            )
        ranked.append((models[0].family_rank, GPU_GROUPS.index(models[0].gpu_group), family))
    ranks = [rank for rank, _, _ in ranked]
    if len(set(ranks)) != len(ranks):
        raise ValueError("gpus.csv: two families share a family_rank")
    groups = [group for _, group, _ in sorted(ranked)]
    if groups != sorted(groups):
        raise ValueError("gpus.csv: family_rank does not run group by group (gpu_group order: GPU_GROUPS)")


def rental_rank(name: str) -> tuple[int, str]:
    """Where the model ``name`` stands in a report's ranking, as (its family's rank, its gpu_group): the
    GPUs teams rent first. A name the catalog does not know comes after every known one, in "other"."""
    model = _catalog().by_name.get(name)
    if model is None:
        return (len(_catalog().by_family) + 1, GPU_GROUPS[-1])
    return (model.family_rank, model.gpu_group)


def all_models() -> list[GpuModel]:
    """Every canonical GPU model, in catalog order (data-centre cards first, then workstation/GeForce)."""
    return list(_catalog().models)


def families() -> list[str]:
    """Family names ("A100", "RTX4090", ...) in catalog order."""
    return list(_catalog().by_family)


def get_model(name: str) -> GpuModel:
    """The model with this exact canonical name (``get_model("A100-80GB")``); KeyError for any other name."""
    return _catalog().by_name[name]


def interconnect_label(model: GpuModel) -> str:
    """How the GPUs of one machine with this model talk, in a few words, from the model's reference specs.

    "NVLink 600 GB/s" (bidirectional, per GPU), "NVLink (cut) 400 GB/s" for China variants whose NVLink
    was cut (A800, H800), "NVLink bridge 112.5 GB/s" for PCIe cards whose NVLink is a bridge joining
    pairs, "PCIe only" for cards without NVLink, and "unknown" when the catalog has no figure.
    """
    if model.nvlink_gbps_bidir is not None:
        text = (model.interconnect or "").casefold()
        kind = "NVLink (cut)" if "(cut)" in text else "NVLink bridge" if "bridge" in text else "NVLink"
        return f"{kind} {model.nvlink_gbps_bidir:g} GB/s"
    return "PCIe only" if model.interconnect else "unknown"


def _suggestions(raw: str, extra: tuple[GpuModel, ...] = ()) -> list[str]:
    cat = _catalog()
    names = [m.name for m in cat.models] + list(cat.by_family)
    by_key: dict[str, str] = {}
    for name in names:
        by_key.setdefault(re.sub(r"[^a-z0-9]", "", name.casefold()), name)
    query = re.sub(r"[^a-z0-9]", "", raw.casefold())
    # People type the letter O for zero ("H8OO", "A1OO"): try the digit reading too.
    digits = query.translate(str.maketrans("oil", "011"))
    near = [
        by_key[k]
        for q in dict.fromkeys((query, digits))
        for k in difflib.get_close_matches(q, by_key, n=5, cutoff=0.6)
    ]
    return list(dict.fromkeys([m.name for m in extra] + near))


def _family_of(raw: str) -> tuple[str, float | None]:
    key, memory = _parse(raw)
    family = _catalog().family_keys.get(key)
    if family is None:
        raise UnknownNameError("GPU", raw, _suggestions(raw))
    return family, memory


def _with_memory(label: str, family: str, memory_gb: float) -> GpuModel:
    # Tolerance covers GiB vs marketed GB (an "80GB" H100 reports 79.6 GiB) but never another size.
    models = _catalog().by_family[family]
    fits = [m for m in models if abs(m.memory_gb - memory_gb) <= max(1.0, 0.1 * m.memory_gb)]
    if not fits:
        raise UnknownNameError("GPU", label, _suggestions(label, models))
    return min(fits, key=lambda m: abs(m.memory_gb - memory_gb))


def _base_models(family: str) -> tuple[GpuModel, ...]:
    """A family's models without its in-family variants: a size that is a variant of another size of
    the same family (the rebuilt 48 GB RTX 4090) is never what the bare family name means."""
    models = _catalog().by_family[family]
    names = {m.name for m in models}
    return tuple(m for m in models if m.variant_of not in names)


def canonical_name(raw: str, memory_gb: float | None = None) -> str:
    """The canonical model name for any spelling a provider or person uses.

    ``canonical_name("NVIDIA A100 80GB") == canonical_name("A100-SXM4-80GB") == "A100-80GB"``. A memory
    figure in the name wins over ``memory_gb`` (per card, GB or GiB); either picks the size within a family:
    ``canonical_name("NVIDIA A100", memory_gb=80) == "A100-80GB"``. Raises ``UsageError`` when the family
    has several sizes and no memory is known, ``UnknownNameError`` for a name that is not a known card
    (including vGPU slices such as "vGPU-32GB").
    """
    family, memory = _family_of(raw)
    if memory is not None:
        return _with_memory(raw, family, memory).name
    if memory_gb is not None:
        return _with_memory(f"{raw} ({memory_gb:g} GB)", family, memory_gb).name
    models = _base_models(family)
    if len(models) > 1:
        names = [m.name for m in models]
        listed = ", ".join(names[:-1]) + " or " + names[-1]
        raise UsageError(f"ambiguous GPU {raw!r}: {listed}", hint=f"name the memory size, e.g. {names[-1]!r}")
    return models[0].name


def resolve_query(query: str, include_variants: bool = False) -> list[Selection]:
    """The models a user means by ``--gpu QUERY``: the selected models in catalog order, then any variants.

    A family ("A100", "4090") means all its sizes; a name with memory ("A100-80GB", "a100 80g") one
    model. China variants standing in for a selected model (A800-80GB for A100-80GB, RTX4090D-24GB for
    RTX4090-24GB, ...) are added only with ``include_variants``, marked ``is_variant=True``; asking for
    "A800" itself selects it as a plain model. Unknown names raise ``UnknownNameError`` with near names.
    """
    family, memory = _family_of(query)
    cat = _catalog()
    chosen = [_with_memory(query, family, memory)] if memory is not None else list(_base_models(family))
    names = {m.name for m in chosen}
    selections = [Selection(m, is_variant=False) for m in chosen]
    if include_variants:
        selections += [
            Selection(m, is_variant=True) for m in cat.models if m.variant_of in names and m.name not in names
        ]
    return selections


@dataclass(frozen=True)
class ListedPurchase:
    """The catalog's purchase price of one card, as listed: ``basis`` "cny" (a China price, ``amount`` in
    CNY) or "usd" (the US price, in USD, carrying no China premium)."""

    amount: Decimal
    basis: str
    date: str | None
    source: str | None
    obtained: str | None = None  # GpuModel.purchase_price_obtained
    confidence: str | None = None

    @property
    def how(self) -> str:
        """How the figure was obtained, in words: "observed, low confidence", "the middle of an
        estimate band, not an observed price, low confidence"."""
        obtained = {ESTIMATE_MIDPOINT: "the middle of an estimate band, not an observed price"}.get(
            self.obtained or "", self.obtained or "not stated"
        )
        return obtained + (f", {self.confidence} confidence" if self.confidence else "")

    def cny(self, cny_per_usd: Decimal | None) -> Decimal | None:
        """The price in CNY: a China price as it is, a US price at ``cny_per_usd`` (None without one)."""
        if self.basis == "cny":
            return self.amount
        return None if cny_per_usd is None else self.amount * cny_per_usd


def purchase_price(model: GpuModel) -> ListedPurchase | None:
    """The one choice of the price a card is bought at: its China price where the catalog has one, else
    its US price; None when it has neither (``gpus --value --buy`` and ``tco`` both cost with it)."""
    if model.purchase_price_cny is not None:
        return ListedPurchase(
            model.purchase_price_cny, "cny", model.purchase_price_date, model.purchase_price_source,
            model.purchase_price_obtained, model.purchase_price_confidence,
        )  # fmt: skip
    if model.purchase_price_usd is not None:
        return ListedPurchase(
            model.purchase_price_usd, "usd", model.purchase_price_date, model.purchase_price_source,
            model.purchase_price_obtained, model.purchase_price_confidence,
        )  # fmt: skip
    return None


def purchase_price_day(model: GpuModel) -> dt.date | None:
    """The day the catalog's purchase price was observed; a month or a year alone ("2024-07", "2020")
    counts from its first day. None when the price is undated."""
    text = (model.purchase_price_date or "").strip()
    match = re.fullmatch(r"(\d{4})(?:-(\d{2}))?(?:-(\d{2}))?", text)
    if not match:
        return None
    return dt.date(int(match[1]), int(match[2] or 1), int(match[3] or 1))


def stale_purchase_price_note(model: GpuModel, today: dt.date) -> str | None:
    """One sentence when the catalog's purchase price of ``model`` is undated or over
    PURCHASE_PRICE_STALE_DAYS old on ``today``; None when it is recent (or there is none)."""
    if model.purchase_price_cny is None and model.purchase_price_usd is None:
        return None
    day = purchase_price_day(model)
    if day is None:
        return Phrase(
            "the catalog's purchase price of {name} is undated: give today's with {purchase_price}",
            name=model.name,
        )
    age = (today - day).days
    if age <= PURCHASE_PRICE_STALE_DAYS:
        return None
    return Phrase(
        "the catalog's purchase price of {name} dates from {date}, {years} year(s) ago: prices move, give "
        "today's with {purchase_price}",
        name=model.name,
        date=model.purchase_price_date,
        years=age // 365,
    )
