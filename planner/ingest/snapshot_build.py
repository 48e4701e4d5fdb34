"""Build the bundled price snapshot (``planner/data/snapshot.csv``) from the dated, sourced price
points in ``shared/data/``. Run by a developer when those points change, never at install time:

    python -m planner.ingest.snapshot_build ../shared/data

Inputs: the Aliyun price-CDN file of 2024-10-09 (``aliyun_ecs_gpu_cn_2024-10-09.json``) and the
compiled points of ``price_points.json`` (2024 to 2026-08) and ``price_points_2026.json`` (2026-03 to
2026-10), plus the project's own ``data/sources/price_points_extra.json`` (points found later, in the same
format; shared/ is not edited from here). The output uses the import format plus a ``gpu_note`` column, so loading the snapshot goes
through the same checked path as ``planner import``. Rules:

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
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

from planner import catalog
from planner.ingest.importer import MAX_FIELD_CHARS
from planner.regions import UNSPECIFIED_REGION
from scrapers.providers.aliyun_families import FAMILIES, family_of
from vocab import IMPORT_COLUMNS, MARKETPLACES, BillingMode

DATA = Path(__file__).parents[1] / "data"  # planner/data
OUTPUT = DATA / "snapshot.csv"
SNAPSHOT_COLUMNS = (*IMPORT_COLUMNS, "gpu_note")

POINT_FILES = ("price_points.json", "price_points_2026.json")
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


def build(data_dir: Path) -> list[dict[str, str]]:
    rows = _aliyun_cdn(data_dir / "aliyun_ecs_gpu_cn_2024-10-09.json")
    paths = [data_dir / name for name in POINT_FILES] + [EXTRA_POINTS]
    points = [p for path in paths for p in json.loads(path.read_text("utf-8"))["points"]]
    rows = _merge_same_day(rows + _price_points(points, rows))
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
    return rows


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
    details "(section ...)" first (the title, date and confidence stay), then is cut with "..."."""
    text = source + suffix
    if len(text) <= MAX_FIELD_CHARS:
        return text
    short = re.sub(r"\s*\((?:[^()]|\([^()]*\))*\)", "", source, count=1)
    text = short + suffix
    return text if len(text) <= MAX_FIELD_CHARS else text[: MAX_FIELD_CHARS - 3] + "..."


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
    rows = build(Path(argv[0]))
    write(rows)
    print(f"wrote {len(rows)} rows to {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
