"""Build the bundled price snapshot (``planner/data/snapshot.csv``) from the dated, sourced price
points in ``shared/data/``. Run by a developer when those points change, never at install time:

    python -m planner.ingest.snapshot_build ../shared/data

Inputs: the Aliyun price-CDN file of 2024-10-09 (``aliyun_ecs_gpu_cn_2024-10-09.json``), the
compiled points of ``price_points.json`` (2024 to 2026-08), ``price_points_2026.json`` (2026-03 to
2026-10) and ``price_points_2026_09.json`` (the newest captures, read last: see below), plus the project's own ``data/sources/price_points_extra.json`` (points found later, in the same
format; shared/ is not edited from here). The output uses the import format plus the ``gpu_note``,
``confirmed_at`` and ``unlisted_at`` columns of ``planner export``, so loading the snapshot goes through
the same checked path as ``planner import``. Rules:

- every row keeps its source and observed date, and the point's confidence in brackets after the
  source ("[third-party; month only]"), so a user reading a price sees how far to trust it;
- a point whose GPU model is inferred rather than stated carries a ``gpu_note`` saying so (the quote
  shows it); a point whose GPU memory size is neither stated nor assumed below is left out, as is one
  whose GPU count is unknown (no per-GPU price can be drawn from it);
- a point with no date at all is left out; an approximate date ("~2024") becomes the first day of its
  period; the source says it is approximate and, when only the year is known, starts with "DATE
  UNKNOWN" in capitals, so the stored day is never mistaken for an observation on that day;
- AutoDL points are named by AutoDL's own GPU name (as ``scrapers.providers.autodl`` stores them), so points of
  one GPU from different sources form one series;
- points that land on the same instance, billing mode and day (the database keeps one price there)
  are merged: the cheapest figure is kept (AutoDL's series is its cheapest listing) and the source
  lists the others.

The newest file, ``price_points_2026_09.json`` (2026-08 to 2026-10, its own format: ``price_cny``,
``observed``, ``note``), is read last, by these rules (``main`` prints what was left out and why):

- a point that shows an older row's price unchanged (same provider, instance type, billing mode and
  price) CONFIRMS that row instead of adding one: the row's ``confirmed_at`` becomes the point's day and
  its source says who confirmed it. Only the offer's latest price is confirmed (an older one is not
  current), on each row of it back to the last change (loaded, those rows are one observation).
  Aliyun's points say "mainland China (not stated per region)" while the 2024-10-09 rows are
  per region: a point confirms every mainland region's row at its price (gn7i-c8g1.2xlarge at 9.5326 in
  Beijing, Chengdu, Guangzhou and Shenzhen, not Heyuan or Ulanqab at 8.5794; never Hong Kong), and one
  that matches no row becomes a row of region ``unspecified``. Tencent's calculator is read for
  Guangzhou; it confirms the older rows of no stated region (GN7.2XLARGE32 8.68, GT4.4XLARGE96 28.64);
- an offer the newest source shows its provider no longer lists is kept (its history stays) but its
  latest price level carries ``unlisted_at``, the source's day: the quote never recommends it and shows
  it among the passed-over. AutoDL's full machine list of 2026-09-15 has no L20 and no A100-80GB (its
  A100 is A100-PCIE-40GB). Tencent's calculator of 2026-09-15 offers P4, P40, T4, V100 and A100 only and
  marks H800, H20, A800, L20, L40 and L40S as needing a ticket or whitelist: those are sold on
  application, not ordered at a listed price, so Tencent rows of those GPUs (the unverified H20 14.58)
  are retired the same way rather than recommended as if orderable. Tencent's bare-metal rows (another
  product page, not in that tab) are left as they are;
- Volcengine's machine-learning platform (veMLP) prices are per GPU-hour of a training queue, a product
  of its own: the rows are named "veMLP general queue L20*1 (per GPU)" and their source says they are
  not ECS instances. The unverified 2026-07-15 figures that were these same prices under "instance (type
  not stated)" names (A100 50.40, L4 8.06) give way to them; the unverified Volcengine L20 17.50 is
  left out, contradicted by veMLP's own L20 price (30.00);
- AutoDL's ``price_cny`` is the list price (原价) of the cheapest listing and the rows are list prices;
  the member price (会员价, 95 %) stays in the row's source ("member price 9.98"). Points that are
  member prices are not rows: the 2026-03-28 table that says it lists member prices, and figures dated
  within a month after the 2026-09-15 list that equal that list's member price and not its list price
  (A800 5.59, RTX 3090 1.32, RTX 4090D 1.88). Older lower figures (H20 7.58, RTX PRO 6000 5.98) stay as
  history; the September list prices (10.50, 7.35) supersede them as the latest;
- only per-hour rentals of providers the planner knows (``planner/providers.py``) become rows: 8-GPU
  server leases and market figures ("market (SMM)", "market (omniyq)"), purchase prices, and clouds the
  planner does not know (ctyun, ai-galaxy, lifangyun) are left out, as is a point whose GPU memory size
  is neither stated nor assumed (veMLP V100).
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
import sys
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path

from planner import catalog
from planner.errors import UnknownNameError
from planner.ingest.importer import MAX_FIELD_CHARS
from planner.providers import canonical_provider
from planner.regions import UNSPECIFIED_REGION, region_scope
from scrapers.providers.aliyun_families import FAMILIES, family_of
from vocab import IMPORT_COLUMNS, MARKETPLACES, BillingMode

DATA = Path(__file__).parents[1] / "data"  # planner/data
OUTPUT = DATA / "snapshot.csv"
SNAPSHOT_COLUMNS = (*IMPORT_COLUMNS, "gpu_note", "confirmed_at", "unlisted_at")

POINT_FILES = ("price_points.json", "price_points_2026.json")
NEWEST_FILE = "price_points_2026_09.json"  # the newest captures, in their own format (read last)
EXTRA_POINTS = DATA / "sources" / "price_points_extra.json"
DATE_UNKNOWN = "DATE UNKNOWN"

# Points whose source names a GPU family with several memory sizes but not the size.
ASSUMED_MEMORY_GB = {("tencent", "A100"): 40, ("volcengine", "A100"): 80, ("tencent", "H20"): 96}

# A marketplace's own GPU names, which its scraper stores as the instance type: AutoDL's ``gpu_type``
# list (shared/reference/samples/autodl_gpu_type_list.json, ``scrapers.providers.autodl``). A model not
# listed keeps the source's name.
MARKET_GPU_NAMES: dict[str, dict[str, str]] = {
    "autodl": {
        "A100-40GB": "A100-PCIE-40GB",
        "A800-80GB": "A800-80GB",
        "H20-96GB": "H20-NVLink",
        "H800-80GB": "H800",
        "RTX3090-24GB": "RTX 3090",
        "RTX4090-24GB": "RTX 4090",
        "RTX4090D-24GB": "RTX 4090D",
        "RTX5090-32GB": "RTX 5090",
        "RTXPRO6000-96GB": "RTX PRO 6000",
        "V100-32GB": "V100-32GB",
    },
}


# Older points a newer, better source contradicts or names for what it is: (provider, instance type,
# price, day) -> why they are left out. The member prices are found by rule (``_member_price``).
SUPERSEDED: dict[tuple[str, str, float, str], str] = {
    ("volcengine", "L20 instance (type not stated)", 17.5, "2026-07-15"): (
        "contradicted by Volcengine's own veMLP price table (L20 30.00 per GPU-hour, 2026-09-15); an "
        "unverified AI-compiled figure with no instance type"
    ),
    ("volcengine", "A100 80GB instance (type not stated)", 50.4, "2026-07-15"): (
        "the same figure is veMLP's A100 queue price per GPU (2026-09-15), not an instance: bundled "
        "under that name instead of this unverified one"
    ),
    ("volcengine", "L4 instance (type not stated)", 8.06, "2026-07-15"): (
        "the same figure is veMLP's L4 queue price per GPU (2026-09-15), not an instance: bundled under "
        "that name instead of this unverified one"
    ),
    ("tencent", "A100 40GB instance (type not stated)", 28.64, "2026-07-15"): (
        "the same figure is GT4.4XLARGE96's on-demand price in Tencent's calculator (2026-09-15): that "
        "row is confirmed instead of keeping this unverified, unnamed one"
    ),
}

# What the 2026-09-15 captures show by what they do not list (shared/data/README.md): the provider,
# which of its rows (AutoDL's GPU names as instance types; Tencent's GPU models), the day and why.
NOT_LISTED: tuple[tuple[str, str, frozenset[str], str, str], ...] = (
    (
        "autodl",
        "instance_type",
        frozenset({"L20", "A100-80GB"}),
        "2026-09-15",
        "AutoDL's full machine list of 2026-09-15 (3,311 machines, 30 GPU types) has no L20 and no "
        "A100-80GB (its A100 is A100-PCIE-40GB)",
    ),
    (
        "tencent",
        "gpu_model",
        frozenset({"H800-80GB", "H20-96GB", "A800-80GB", "L20-48GB", "L40-48GB", "L40S-48GB"}),
        "2026-09-15",
        "Tencent's price calculator of 2026-09-15 offers P4, P40, T4, V100 and A100 only; H800, H20, "
        "A800, L20, L40 and L40S need a ticket or whitelist (on application, no orderable listed price)",
    ),
)
MEMBER_WINDOW_DAYS = 31  # how long after AutoDL's full list a figure equal to its member price is one


def build(data_dir: Path) -> list[dict[str, str]]:
    return build_with_notes(data_dir)[0]


def build_with_notes(data_dir: Path) -> tuple[list[dict[str, str]], list[str]]:
    """The snapshot's rows, and what was left out of them and why (one line each)."""
    rows = _aliyun_cdn(data_dir / "aliyun_ecs_gpu_cn_2024-10-09.json")
    paths = [data_dir / name for name in POINT_FILES] + [EXTRA_POINTS]
    points = [p for path in paths for p in json.loads(path.read_text("utf-8"))["points"]]
    newest = json.loads((data_dir / NEWEST_FILE).read_text("utf-8"))
    older, left_out = _leave_out(_price_points(points, rows), _autodl_member_prices(newest))
    rows = _merge_same_day(rows + older)
    new_rows, confirmations, more_left_out = _newest_points(newest, rows)
    left_out += more_left_out
    _confirm(rows, confirmations)
    rows = _merge_same_day(rows + new_rows)
    _retire(rows)
    rows.sort(
        key=lambda r: (
            r["provider"],
            r["gpu_model"],
            r["instance_type"],
            r["region"],
            r["billing"],
            r["observed_at"],
        )
    )
    return rows, left_out


def _leave_out(rows: list[dict[str, str]], members: dict[str, tuple[Decimal, Decimal, str]]
               ) -> tuple[list[dict[str, str]], list[str]]:  # fmt: skip
    """The rows of the older points less those a newer source contradicts, names otherwise or shows to
    be member prices; and one line for each left out."""
    kept, out = [], []
    for r in rows:
        key = (r["provider"], r["instance_type"], float(r["price"]), r["observed_at"])
        why = SUPERSEDED.get(key) or _member_price(r, members)
        if why:
            out.append(f"{r['provider']} {r['instance_type']} {r['price']} ({r['observed_at']}): {why}")
        else:
            kept.append(r)
    return kept, out


def _member_price(row: dict[str, str], members: dict[str, tuple[Decimal, Decimal, str]]) -> str | None:
    """Why an AutoDL row is a member price (会员价) rather than a list price, if it is one: its source
    says so, or it falls within a month after AutoDL's full list and equals that list's cheapest member
    price for the GPU (and not its list price)."""
    if row["provider"] != "autodl" or row["billing"] != BillingMode.ON_DEMAND.value:
        return None
    if "[member price (会员价" in row["source"]:
        return "a member price (会员价, ~95 % of list) by its own source; AutoDL's rows are list prices"
    if row["instance_type"] not in members:
        return None
    list_price, member, day = members[row["instance_type"]]
    after = dt.date.fromisoformat(row["observed_at"]) - dt.date.fromisoformat(day)
    price = Decimal(row["price"])
    if dt.timedelta(0) < after <= dt.timedelta(days=MEMBER_WINDOW_DAYS) and price == member != list_price:
        return (
            f"equals the member price of AutoDL's full machine list of {day} (list {list_price}, member "
            f"{member}): a member price, and AutoDL's rows are list prices"
        )
    return None


def _autodl_member_prices(points: list[dict]) -> dict[str, tuple[Decimal, Decimal, str]]:
    """AutoDL's cheapest list and member price of each GPU in its newest full list, by AutoDL's name."""
    out = {}
    for p in points:
        member = re.search(r"member (\d+(?:\.\d+)?)", p["note"]) if p["provider"] == "autodl" else None
        if member:
            out[p["instance_type"]] = (Decimal(_fmt(p["price_cny"])), Decimal(member[1]), p["observed"])
    return out


NEWEST_SOURCES = {
    "aliyun": "Aliyun ECS price page (按量目录价, on-demand list price; mainland China, region not stated per row)",
    "tencent": "Tencent CVM price calculator ('GPU机型' tab, on-demand 官网优惠价, Guangzhou)",
    "autodl": "AutoDL machine list (all 3,311 machines, 30 GPU types): list price (原价) of the cheapest listing",
    "volcengine": (
        "Volcengine machine-learning platform (veMLP) 通用队列 pay-as-you-go price per GPU-hour of a 1-GPU "
        "training-queue spec: a product of its own, not an ECS instance"
    ),
}


def _newest_points(points: list[dict], rows: list[dict[str, str]]
                   ) -> tuple[list[dict[str, str]], list[tuple[list[dict[str, str]], dict]], list[str]]:  # fmt: skip
    """The newest file's points as new rows, as confirmations of older rows (the rows and the point),
    and the points left out, one line each with the reason."""
    latest: dict[tuple[str, ...], dict[str, str]] = {}
    for r in rows:
        key = (r["provider"], r["region"], r["instance_type"], r["billing"])
        if key not in latest or latest[key]["observed_at"] < r["observed_at"]:
            latest[key] = r
    new, confirmations, out = [], [], []
    for p in points:
        label = f"{p['provider']} {p['instance_type']} {_fmt(p['price_cny'])} ({p['observed']})"
        why = _not_a_rental(p)
        if why:
            out.append(f"{label}: {why}")
            continue
        provider = canonical_provider(p["provider"])
        model, note = _newest_model(p, provider)
        if model is None:
            out.append(f"{label}: GPU memory size not stated ({p['gpu_model']}) nor assumed")
            continue
        region = _region(p["region"])
        price = Decimal(_fmt(round(p["price_cny"], 6)))
        offer = (provider, p["instance_type"], p["billing"])
        matches = [
            r
            for r in latest.values()
            if (r["provider"], r["instance_type"], r["billing"]) == offer
            and Decimal(r["price"]) == price
            and r["observed_at"] <= p["observed"]
            and _same_place(provider, region, r["region"])
        ]
        if matches:
            confirmations.append((matches, p))
            continue
        itype = p["instance_type"]
        if provider == "volcengine" and itype.startswith("veMLP"):
            itype = re.sub(r"\s*\(.*\)$", "", itype) + " (per GPU)"
        vcpus, memory = _vcpus_memory(f"{p['instance_type']} {p['note']}")
        new.append(
            _row(provider, region, itype, model, p["gpu_count"], p["billing"], p["price_cny"], p["observed"],
                 _newest_source(p), vcpus=vcpus, memory_gb=memory, gpu_note=note)
        )  # fmt: skip
    return new, confirmations, out


def _not_a_rental(point: dict) -> str | None:
    """Why a point of the newest file is no row of a rental snapshot, if it is not."""
    if point["billing"] == "purchase":
        return "a purchase price, not a rental"
    try:
        canonical_provider(point["provider"])
    except UnknownNameError:
        if point["provider"].startswith("market"):
            return "a market lease of whole 8-GPU servers (per month, long contracts), not a per-hour cloud rental"
        return "not a provider the planner knows (planner/providers.py): no row can name it"
    if point["unit"] != "hour":
        return "not a per-hour price"
    return None


def _newest_model(point: dict, provider: str) -> tuple[str | None, str]:
    """The catalog model of a newest point and its GPU note; None when its memory size is unknown."""
    raw = point["gpu_model"]
    if "memory not stated" in raw:
        family = raw.split(" ")[0]
        memory = ASSUMED_MEMORY_GB.get((provider, family))
        if memory is None:
            return None, ""
        note = f"{family} memory size not stated by the source; assumed {memory} GB"
        return catalog.canonical_name(family, memory), note
    model = catalog.canonical_name(raw)
    if provider != "aliyun":
        return model, ""
    name = family_of(point["instance_type"]) or point["instance_type"]
    family = FAMILIES.get(name)
    if family is None:
        return (
            model,
            f"GPU inferred from a third-party tracker's label; the {name} family is not in our table",
        )
    if family.inferred:
        return model, f"GPU inferred from the {name} family and a tracker's label, not stated by Aliyun"
    return model, ""


def _region(text: str) -> str:
    """A point's region as the snapshot names it: provider region ids ("cn-beijing / cn-shanghai (华北2)"
    -> "cn-beijing/cn-shanghai"), or ``unspecified`` for a description ("mainland China ...")."""
    ids = re.sub(r"\s*\(.*\)$", "", text or "").replace(" ", "")
    one = r"[a-z]{2}-[a-z]+(?:-\d+)?"
    return ids if re.fullmatch(rf"{one}(?:/{one})*", ids) else UNSPECIFIED_REGION


def _same_place(provider: str, point_region: str, row_region: str) -> bool:
    """Whether a point read for ``point_region`` speaks of a row's region: a point of no stated region
    (Aliyun's mainland price page) of every mainland region; a regional one of its region and of rows
    whose source named none."""
    if point_region == UNSPECIFIED_REGION:
        return region_scope(provider, row_region) == "mainland"
    return row_region in (point_region, UNSPECIFIED_REGION)


def _newest_source(point: dict, confirmed: bool = False) -> str:
    """The source text of a newest point: what the figure is, who read it, and how far to trust it."""
    what = NEWEST_SOURCES[canonical_provider(point["provider"])]
    if point["provider"] == "autodl":
        member = re.search(r"member (\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?)", point["note"])
        listed = re.search(r"list (\d+(?:\.\d+)?-\d+(?:\.\d+)?)", point["note"])
        what += f" (list {listed[1]})" if listed else ""
        what += f"; member price {member[1]}" if member else "; no member price stated"
    commit = re.sub(r"@([0-9a-f]{8})[0-9a-f]+", r"@\1", point["source"])
    text = f"{what}, read by a third-party tracker: {commit} [{point['confidence']} confidence]"
    if confirmed:
        text = f"unchanged on {point['observed']} per {text}"
    return text


def _confirm(rows: list[dict[str, str]], confirmations: Iterable[tuple[list[dict[str, str]], dict]]) -> None:
    """Mark each confirmed row's price level: last seen at that price on the point's day, and by whom."""
    for matches, point in confirmations:
        for latest in matches:
            for r in _latest_level(rows, latest):
                r["confirmed_at"] = max(r["confirmed_at"], point["observed"])
                r["source"] = _fit(r["source"], f" | {_newest_source(point, confirmed=True)}")


def _retire(rows: list[dict[str, str]]) -> None:
    """Set ``unlisted_at`` on the latest price level of each offer the newest source shows its provider
    no longer lists (NOT_LISTED), and say why in its source."""
    for provider, column, names, day, why in NOT_LISTED:
        latest: dict[tuple[str, ...], dict[str, str]] = {}
        for r in rows:
            if r["provider"] == provider and r[column] in names and r["observed_at"] <= day:
                key = (r["provider"], r["region"], r["instance_type"], r["billing"])
                if key not in latest or latest[key]["observed_at"] < r["observed_at"]:
                    latest[key] = r
        for r in (r for last in latest.values() for r in _latest_level(rows, last)):
            r["unlisted_at"] = day
            r["source"] = _fit(r["source"], f" | not listed on {day}: {why}")


def _latest_level(rows: list[dict[str, str]], latest: dict[str, str]) -> list[dict[str, str]]:
    """The rows of ``latest``'s offer at its price, back to the last change. Loaded, the first of them
    is the stored observation and the others confirm it (``db.bulk``): each carries a mark, so the
    stored row has it whichever row its source and dates come from."""
    key = (latest["provider"], latest["region"], latest["instance_type"], latest["billing"])
    series = sorted(
        (r for r in rows if (r["provider"], r["region"], r["instance_type"], r["billing"]) == key),
        key=lambda r: r["observed_at"],
    )
    level = []
    for r in reversed(series[: series.index(latest) + 1]):
        if r["price"] != latest["price"]:
            break
        level.append(r)
    return level


def _aliyun_cdn(path: Path) -> list[dict[str, str]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    source = (
        "Aliyun ECS price CDN (China site, list price) via cloudpilot-ai/priceserver builtin data @93dab418"
    )
    rows = []
    for region, body in doc["data"].items():
        for itype, info in body["instanceTypePrices"].items():
            family = FAMILIES.get(family_of(itype) or "")
            if family is None or family.vgpu or not info["onDemandPricePerHour"]:
                continue  # vGPU slices have no whole-GPU count; a 0 price means "not sold"
            note = (
                f"GPU inferred from the {family_of(itype)} family, not stated by Aliyun"
                if family.inferred
                else ""
            )
            rows.append(
                _row(
                    "aliyun",
                    region,
                    itype,
                    catalog.canonical_name(family.gpu_name, family.gpu_memory_gb),
                    info["gpu"],
                    BillingMode.ON_DEMAND.value,
                    info["onDemandPricePerHour"],
                    "2024-10-09",
                    source,
                    vcpus=info["vcpu"],
                    memory_gb=info["memory"],
                    gpu_note=note,
                )
            )
    return rows


def _price_points(points: list[dict], cdn_rows: list[dict[str, str]]) -> list[dict[str, str]]:
    cdn_prices = {(r["instance_type"], r["price"]) for r in cdn_rows}
    full_types = {(p["provider"], p["instance_type"]) for p in points if "." in p["instance_type"]}
    rows = []
    for p in points:
        if p["provider"] == "aliyun" and (
            "priceserver" in p["source"] or (p["instance_type"], _fmt(p["price"])) in cdn_prices
        ):
            continue  # the CDN file above carries these, with regions
        day, approx = _date(p["as_of"])
        if day is None or not p["gpu_count"]:
            continue  # undated: cannot be placed in history; no GPU count: no price per GPU
        gpu_raw = re.sub(r"\s*\(.*\)$", "", p["gpu_model"]).strip()
        note = ""
        memory = p.get("gpu_mem_gb")
        if "inferred" in p["gpu_model"] or "unclear" in p["gpu_model"]:
            note = f"GPU model inferred ({p['gpu_model']}), not stated by the source"
        family = catalog.canonical_name(gpu_raw, memory).split("-")[0] if memory else gpu_raw.split()[-1]
        if not memory:
            memory = ASSUMED_MEMORY_GB.get((p["provider"], family))
            if memory is None and len(catalog.resolve_query(family)) > 1:
                continue  # which size the price is for is unknown: not a price of any one model
            note = f"{family} memory size not stated by the source; assumed {memory} GB" if memory else note
        per_gpu = "/GPU/" in p["unit"]
        count = p["gpu_count"]
        price = p["price"] * count if per_gpu else p["price"]
        model = catalog.canonical_name(gpu_raw, memory)
        itype = _instance_type(p, full_types, model)
        vcpus, mem = _vcpus_memory(p["instance_type"])
        source = f"{p['source']} [{p['confidence']}]"
        if p.get("flag"):  # a point kept only as a lead: said first, where a cut table column shows it
            source = f"{p['flag']}: {source}"
        if approx and re.fullmatch(r"~\d{4}", p["as_of"].strip()):  # a year only: say so first, loudly
            source = f"{DATE_UNKNOWN} (only '{p['as_of']}' known; stored as {day}): {source}"
        elif approx:
            source += f" [date approximate: {p['as_of']}]"
        source = _fit(source)
        rows.append(
            _row(
                p["provider"],
                (p["region"] or UNSPECIFIED_REGION).split(" ")[0],
                itype,
                model,
                count,
                p["billing"],
                price,
                day,
                source,
                vcpus=vcpus,
                memory_gb=mem,
                gpu_note=note,
            )
        )
    return rows


def _merge_same_day(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """One row per instance, billing mode and day: the cheapest, its source counting the others."""
    groups: dict[tuple[str, ...], list[dict[str, str]]] = {}
    for r in rows:
        key = (r["provider"], r["region"], r["instance_type"], r["billing"], r["observed_at"])
        groups.setdefault(key, []).append(r)
    merged = []
    for group in groups.values():
        group.sort(key=lambda r: float(r["price"]))
        kept, others = dict(group[0]), group[1:]
        same = [o for o in others if o["price"] == kept["price"] and o["source"] != kept["source"]]
        dearer = [o["price"] for o in others if o["price"] != kept["price"]]
        notes = [f"also reported by {len(same)} other source(s) that day"] if same else []
        if dearer:
            notes.append(f"other figures that day: {', '.join(dearer)} CNY (the cheapest kept)")
        kept["source"] = _fit(kept["source"], "".join(f" | {n}" for n in notes))
        merged.append(kept)
    return merged


def _fit(source: str, suffix: str = "") -> str:
    """``source + suffix`` within the importer's field limit: a long source loses its bracketed
    details "(section ...)" first (the title, date and confidence stay), then is cut with "..."; the
    suffix (a confirmation, why an offer is no longer listed) is kept whole."""
    text = source + suffix
    if len(text) <= MAX_FIELD_CHARS:
        return text
    short = re.sub(r"\s*\((?:[^()]|\([^()]*\))*\)", "", source, count=1)
    text = short + suffix
    if len(text) <= MAX_FIELD_CHARS:
        return text
    return short[: MAX_FIELD_CHARS - 3 - len(suffix)] + "..." + suffix


def _instance_type(point: dict, full_types: set[tuple[str, str]], model: str) -> str:
    if point["provider"] in MARKETPLACES:  # a marketplace prices per GPU model: "RTX 4090 (machine west-B)"
        named = MARKET_GPU_NAMES.get(point["provider"], {}).get(model)
        return named or re.sub(r"\s*\(.*\)$", "", point["gpu_model"]).strip()
    itype = point["instance_type"].strip()
    if itype.startswith("(") and itype.endswith(")"):  # "(GN7)": a family named in brackets
        itype = itype[1:-1].strip()
    if "." not in itype:  # a family name only: the one full type of that family, when there is one
        matches = [t for prov, t in full_types if prov == point["provider"] and t.split(".")[0] == itype]
        if len(matches) == 1:
            return matches[0]
    return itype


def _vcpus_memory(text: str) -> tuple[int | None, float | None]:
    match = re.search(r"(\d+)\s*vCPU\s*/\s*(\d+)\s*GiB", text)
    return (int(match[1]), float(match[2])) if match else (None, None)


def _date(as_of: str) -> tuple[str | None, bool]:
    text = as_of.strip()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return text, False
    match = re.fullmatch(r"~(\d{4})(?:-(\d{2}))?", text)
    if match:
        return f"{match[1]}-{match[2] or '01'}-01", True
    return None, False


def _fmt(value: float) -> str:
    return format(value, "f").rstrip("0").rstrip(".") if isinstance(value, float) else str(value)


def _row(provider, region, itype, gpu_model, count, billing, price, day, source, vcpus=None, memory_gb=None,
         gpu_note="") -> dict[str, str]:  # fmt: skip
    return {
        "provider": provider,
        "region": region,
        "instance_type": itype,
        "gpu_model": gpu_model,
        "gpu_count": _fmt(count),
        "billing": BillingMode.ON_DEMAND.value if billing == "payg" else billing,
        "price": _fmt(round(price, 6)),
        "currency": "CNY",
        "observed_at": day,
        "vcpus": "" if vcpus is None else str(vcpus),
        "memory_gb": "" if memory_gb is None else _fmt(memory_gb),
        "source": source,
        "gpu_note": gpu_note,
        "confirmed_at": "",
        "unlisted_at": "",
    }


def write(rows: list[dict[str, str]], path: Path = OUTPUT) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=SNAPSHOT_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m planner.ingest.snapshot_build SHARED_DATA_DIR", file=sys.stderr)
        return 2
    rows, left_out = build_with_notes(Path(argv[0]))
    write(rows)
    confirmed = sum(1 for r in rows if r["confirmed_at"])
    unlisted = sum(1 for r in rows if r["unlisted_at"])
    print(f"wrote {len(rows)} rows to {OUTPUT} ({confirmed} confirmed, {unlisted} marked not listed)")
    print(f"left out {len(left_out)} point(s):")
    for line in left_out:
        print(f"  - {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
