"""Build the bundled price snapshot (``planner/data/snapshot.csv``) from the dated, sourced price
points in ``shared/data/``. Run by a developer when those points change, never at install time:

    python -m planner.snapshot_build ../shared/data

The output uses the import format plus a ``gpu_note`` column, so loading the snapshot goes through
the same checked path as ``planner import``. Every row keeps its source and observed date; a point
whose GPU model is inferred rather than stated carries a ``gpu_note`` saying so (and the quote shows
it); a point with no date at all is left out; an approximate date ("~2024") becomes the first day of
its period and the source says it is approximate.
"""

from __future__ import annotations

import csv
import json
import re
import sys
from pathlib import Path

from planner import catalog
from planner.importer import COLUMNS
from scrapers.aliyun_families import FAMILIES, family_of

OUTPUT = Path(__file__).parent / "data" / "snapshot.csv"
SNAPSHOT_COLUMNS = (*COLUMNS, "gpu_note")
UNSPECIFIED_REGION = "unspecified"

# Points whose source names a GPU family with several memory sizes but not the size.
ASSUMED_MEMORY_GB = {("tencent", "A100"): 40, ("volcengine", "A100"): 80}


def build(data_dir: Path) -> list[dict[str, str]]:
    rows = _aliyun_cdn(data_dir / "aliyun_ecs_gpu_cn_2024-10-09.json")
    rows += _price_points(data_dir / "price_points.json", rows)
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
                    "on_demand",
                    info["onDemandPricePerHour"],
                    "2024-10-09",
                    source,
                    vcpus=info["vcpu"],
                    memory_gb=info["memory"],
                    gpu_note=note,
                )
            )
    return rows


def _price_points(path: Path, cdn_rows: list[dict[str, str]]) -> list[dict[str, str]]:
    points = json.loads(path.read_text(encoding="utf-8"))["points"]
    cdn_prices = {(r["instance_type"], r["price"]) for r in cdn_rows}
    full_types = {(p["provider"], p["instance_type"]) for p in points if "." in p["instance_type"]}
    rows = []
    for p in points:
        if p["provider"] == "aliyun" and (
            "priceserver" in p["source"] or (p["instance_type"], _fmt(p["price"])) in cdn_prices
        ):
            continue  # the CDN file above carries these, with regions
        day, approx = _date(p["as_of"])
        if day is None:
            continue  # undated: cannot be placed in history
        gpu_raw = re.sub(r"\s*\(.*\)$", "", p["gpu_model"]).strip()
        note = ""
        memory = p.get("gpu_mem_gb")
        if "inferred" in p["gpu_model"] or "unclear" in p["gpu_model"]:
            note = f"GPU model inferred ({p['gpu_model']}), not stated by the source"
        family = catalog.canonical_name(gpu_raw, memory).split("-")[0] if memory else gpu_raw.split()[-1]
        if not memory:
            memory = ASSUMED_MEMORY_GB.get((p["provider"], family))
            note = f"{family} memory size not stated by the source; assumed {memory} GB"
        per_gpu = "/GPU/" in p["unit"]
        count = p["gpu_count"]
        price = p["price"] * count if per_gpu else p["price"]
        itype = _instance_type(p, full_types)
        vcpus, mem = _vcpus_memory(p["instance_type"])
        source = f"{p['source']} [{p['confidence']}]"
        if approx:
            source += f" [date approximate: {p['as_of']}]"
        rows.append(
            _row(
                p["provider"],
                (p["region"] or UNSPECIFIED_REGION).split(" ")[0],
                itype,
                catalog.canonical_name(gpu_raw, memory),
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


def _instance_type(point: dict, full_types: set[tuple[str, str]]) -> str:
    if point["provider"] == "autodl":  # AutoDL prices are per GPU model: "RTX 4090 (machine west-B)"
        return re.sub(r"\s*\(.*\)$", "", point["instance_type"]).strip()
    itype = point["instance_type"].strip("() ")
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
        "billing": "on_demand" if billing == "payg" else billing,
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
        print("usage: python -m planner.snapshot_build SHARED_DATA_DIR", file=sys.stderr)
        return 2
    rows = build(Path(argv[0]))
    write(rows)
    print(f"wrote {len(rows)} rows to {OUTPUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
