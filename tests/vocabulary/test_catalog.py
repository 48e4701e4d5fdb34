"""The GPU vocabulary: names providers and people use, the specs behind them and what --gpu selects."""

import csv
import datetime as dt
import subprocess
import sys
from decimal import Decimal
from importlib import resources
from pathlib import Path

import pytest

from planner import catalog
from planner.catalog import canonical_name, get_model, resolve_query
from planner.errors import UnknownNameError, UsageError

GIB = 2**30

NAME_CASES = [
    # Forms people and docs use.
    ("NVIDIA A100 80GB", "A100-80GB"),
    ("A100 80G", "A100-80GB"),
    ("a100 80 GiB", "A100-80GB"),
    ("A100-80GB", "A100-80GB"),
    ("A100-SXM4-80GB", "A100-80GB"),
    ("NVIDIA A100-SXM4-40GB", "A100-40GB"),
    ("A100-PCIE-40GB", "A100-40GB"),
    ("RTX 4090", "RTX4090-24GB"),
    ("4090", "RTX4090-24GB"),
    ("GeForce RTX 4090", "RTX4090-24GB"),
    ("NVIDIA GeForce RTX 4090", "RTX4090-24GB"),
    # The rebuilt 48 GB card is its own model (CompShare's GPU type "4090_48G"), never the 24 GB one.
    ("4090_48G", "RTX4090-48GB"),
    ("RTX 4090 48GB", "RTX4090-48GB"),
    ("Tesla T4", "T4-16GB"),
    ("NVIDIA T4", "T4-16GB"),
    ("H20-NVLink", "H20-96GB"),
    ("NVIDIA H20", "H20-96GB"),
    ("A800-80GB-NVLink", "A800-80GB"),
    ("NVIDIA A800-SXM4-80GB", "A800-80GB"),
    ("RTX 4090D", "RTX4090D-24GB"),
    ("RTX 4090 D", "RTX4090D-24GB"),
    ("4090D", "RTX4090D-24GB"),
    ("RTX 5090 D", "RTX5090D-32GB"),
    ("Tesla V100-SXM2-32GB", "V100-32GB"),
    ("Tesla V100-PCIE-16GB", "V100-16GB"),
    ("V100-32GB", "V100-32GB"),
    ("L20", "L20-48GB"),
    ("RTX PRO 6000", "RTXPRO6000-96GB"),
    ("RTX PRO 6000 Max-Q", "RTXPRO6000-96GB"),
    ("NVIDIA RTX PRO 6000 Blackwell", "RTXPRO6000-96GB"),
    ("RTX 6000D", "RTXPRO6000D-84GB"),
    ("RTX A4000", "RTXA4000-16GB"),
    ("RTX 2080 Ti", "RTX2080TI-11GB"),
    ("NVIDIA A10", "A10-24GB"),
    ("NVIDIA H100 80GB HBM3", "H100-80GB"),
    ("H100 SXM5 80GB", "H100-80GB"),
    ("NVIDIA L40S", "L40S-48GB"),
    ("NVIDIA RTX 6000 Ada Generation", "RTX6000ADA-48GB"),
    ("NVIDIA RTX A6000", "RTXA6000-48GB"),
    ("A6000", "RTXA6000-48GB"),
    ("Tesla P40", "P40-24GB"),
    ("Tesla P100-PCIE-16GB", "P100-16GB"),
    ("Tesla P4", "P4-8GB"),
    ("B200", "B200-180GB"),
    ("H200 141GB", "H200-141GB"),
    # Every gpu_model in shared/data/price_points.json (notes such as "(inferred)" stripped by the caller).
    ("A800-80GB", "A800-80GB"),
    ("H20 96GB", "H20-96GB"),
    ("H800", "H800-80GB"),
    ("NVIDIA A100 40GB", "A100-40GB"),
    ("NVIDIA A800 80GB", "A800-80GB"),
    ("NVIDIA V100 16GB", "V100-16GB"),
    ("NVIDIA V100 32GB", "V100-32GB"),
    ("RTX 3080", "RTX3080-10GB"),
    ("RTX 3080 Ti", "RTX3080TI-12GB"),
    ("RTX 3090", "RTX3090-24GB"),
    ("RTX 5090", "RTX5090-32GB"),
]


@pytest.mark.parametrize(("raw", "expected"), NAME_CASES)
def test_canonical_name(raw, expected):
    assert canonical_name(raw) == expected


# AutoDL's /api/v1/machine/gpu_type names and gpu_memory bytes (shared/reference/samples); real cards only.
AUTODL_TYPES = [
    ("RTX 5090", 34359738368, "RTX5090-32GB"),
    ("RTX 5090 D", 34359738368, "RTX5090D-32GB"),
    ("RTX 4090", 25769803776, "RTX4090-24GB"),
    ("RTX 4090D", 25769803776, "RTX4090D-24GB"),
    ("RTX 3090", 25769803776, "RTX3090-24GB"),
    ("V100-32GB", 34359738368, "V100-32GB"),
    ("A100-PCIE-40GB", 42949672960, "A100-40GB"),
    ("A800-80GB", 85899345920, "A800-80GB"),
    ("H20-NVLink", 103079215104, "H20-96GB"),
    ("H800", 85899345920, "H800-80GB"),
    ("RTX PRO 6000", 103079215104, "RTXPRO6000-96GB"),
    ("RTX 6000D", 90194313216, "RTXPRO6000D-84GB"),
]


@pytest.mark.parametrize(("raw", "memory_bytes", "expected"), AUTODL_TYPES)
def test_canonical_name_autodl_types_with_memory(raw, memory_bytes, expected):
    assert canonical_name(raw, memory_gb=memory_bytes / GIB) == expected


@pytest.mark.parametrize(
    ("raw", "memory_gb", "expected"),
    [
        ("NVIDIA A100", 80, "A100-80GB"),
        ("NVIDIA A100", 79.6, "A100-80GB"),  # nvidia-smi's GiB
        ("NVIDIA A100", 81920 / 1024, "A100-80GB"),  # MiB converted by the caller
        ("NVIDIA A100", 40, "A100-40GB"),
        ("NVIDIA A100", 39.4, "A100-40GB"),
        ("V100", 16, "V100-16GB"),
        ("A100 40GB", 80, "A100-40GB"),  # a figure in the name wins over the hint
    ],
)
def test_memory_hint_picks_the_size(raw, memory_gb, expected):
    assert canonical_name(raw, memory_gb=memory_gb) == expected


def test_family_with_several_sizes_and_no_memory_is_ambiguous():
    with pytest.raises(UsageError) as excinfo:
        canonical_name("NVIDIA A100")
    assert not isinstance(excinfo.value, UnknownNameError)
    assert excinfo.value.message.startswith("ambiguous GPU 'NVIDIA A100'")
    assert excinfo.value.message.endswith("A100-40GB or A100-80GB")  # the sizes to choose from
    assert "A100-80GB" in excinfo.value.hint
    assert excinfo.value.exit_code == 2


@pytest.mark.parametrize("raw", ["vGPU-32GB", "vGPU-48GB", "Quadro RTX 6000", "RTX 6000", "", "A100 80"])
def test_unknown_names(raw):
    with pytest.raises(UnknownNameError) as excinfo:
        canonical_name(raw)
    assert excinfo.value.kind == "GPU"
    assert excinfo.value.exit_code == 2


@pytest.mark.parametrize(
    "raw", ["NVIDIA A100 (40/80GB unclear)", "NVIDIA A800 80GB (inferred)", "H20 96GB (inferred)"]
)
def test_notes_in_a_name_are_not_silently_read(raw):
    # "(40/80GB unclear)" must never become "80GB": callers strip such notes and decide themselves.
    with pytest.raises(UnknownNameError):
        canonical_name(raw)


@pytest.mark.parametrize(
    ("raw", "memory_gb", "suggested"),
    [
        ("H20 141GB", None, "H20-96GB"),  # the 141GB H20 is not in the catalog: no silent 96GB
        ("RTX 4090 96GB", None, "RTX4090-24GB"),
        ("NVIDIA A100", 64, "A100-80GB"),
        ("NVIDIA T4", 4, "T4-16GB"),  # a quarter-T4 vGPU slice is not a T4
    ],
)
def test_memory_that_fits_no_size_is_unknown(raw, memory_gb, suggested):
    with pytest.raises(UnknownNameError) as excinfo:
        canonical_name(raw, memory_gb=memory_gb)
    assert suggested in excinfo.value.suggestions


def test_unknown_name_suggests_near_names():
    with pytest.raises(UnknownNameError) as excinfo:
        canonical_name("A10O-80GB")
    assert "A100-80GB" in excinfo.value.suggestions


def _picked(selections):
    return [(s.model.name, s.is_variant) for s in selections]


@pytest.mark.parametrize(
    ("query", "include_variants", "expected"),
    [
        ("A100", False, [("A100-40GB", False), ("A100-80GB", False)]),
        ("A100", True, [("A100-40GB", False), ("A100-80GB", False), ("A800-80GB", True)]),
        ("nvidia a100", False, [("A100-40GB", False), ("A100-80GB", False)]),
        ("A100-80GB", False, [("A100-80GB", False)]),
        ("a100 80g", False, [("A100-80GB", False)]),
        ("A100-80GB", True, [("A100-80GB", False), ("A800-80GB", True)]),
        ("A100-40GB", True, [("A100-40GB", False)]),
        ("4090", False, [("RTX4090-24GB", False)]),
        ("RTX 4090", True, [("RTX4090-24GB", False), ("RTX4090D-24GB", True), ("RTX4090-48GB", True)]),
        ("H100", True, [("H100-80GB", False), ("H800-80GB", True)]),
        ("5090", True, [("RTX5090-32GB", False), ("RTX5090D-32GB", True)]),
        ("A800", False, [("A800-80GB", False)]),
        ("A800", True, [("A800-80GB", False)]),
        ("4090D", True, [("RTX4090D-24GB", False)]),
        ("H20", True, [("H20-96GB", False)]),
        ("L40S", True, [("L40S-48GB", False)]),  # L20 is its own family, never a variant
        ("V100", False, [("V100-16GB", False), ("V100-32GB", False)]),
    ],
)
def test_resolve_query(query, include_variants, expected):
    assert _picked(resolve_query(query, include_variants=include_variants)) == expected


def test_resolve_query_unknown_suggests_models_and_families():
    with pytest.raises(UnknownNameError) as excinfo:
        resolve_query("A10O")
    assert {"A100", "A10"} <= set(excinfo.value.suggestions)
    assert "A100" in excinfo.value.hint


def test_resolve_query_size_not_in_family():
    with pytest.raises(UnknownNameError) as excinfo:
        resolve_query("A100-64GB")
    assert {"A100-40GB", "A100-80GB"} <= set(excinfo.value.suggestions)


# The rows of shared/reference/gpu_specs.csv behind each model: (dense TFLOPS, memory, bandwidth, TDP).
SPECS = {
    "A100-40GB": (
        "A100 PCIe 40GB",
        312,
        40,
        1555,
        400,
    ),  # compute of that row; SXM4's power, as clouds rent it
    "A100-80GB": ("A100 SXM 80GB", 312, 80, 2039, 400),
    "A800-80GB": ("A800 SXM 80GB", 312, 80, 2039, 400),
    "H100-80GB": ("H100 SXM 80GB", 989, 80, 3350, 700),
    "H800-80GB": ("H800 SXM 80GB", 989, 80, 3350, 700),
    "H20-96GB": ("H20 96GB", 148, 96, 4000, 400),
    "H200-141GB": ("H200 SXM 141GB", 989, 141, 4800, 700),
    "B200-180GB": ("B200", 2250, 180, 8000, 1000),
    "L40S-48GB": ("L40S", 362.05, 48, 864, 350),
    "L40-48GB": ("L40", 181.05, 48, 864, 300),
    "L20-48GB": ("L20", 119.5, 48, 864, 275),
    "L4-24GB": ("L4", 121, 24, 300, 72),
    "A10-24GB": ("A10", 125, 24, 600, 150),
    "A30-24GB": ("A30", 165, 24, 933, 165),
    "T4-16GB": ("T4", 65, 16, 320, 70),
    "V100-16GB": ("V100 SXM2 16GB", 125, 16, 900, 300),
    "V100-32GB": ("V100 SXM2 32GB", 125, 32, 900, 300),
    "RTX4090-24GB": ("RTX 4090", 165.2, 24, 1008, 450),
    "RTX4090D-24GB": ("RTX 4090 D", 147.1, 24, 1008, 425),
    "RTX3090-24GB": ("RTX 3090", 71, 24, 936, 350),
    "RTX5090-32GB": ("RTX 5090", 209.5, 32, 1792, 575),
    "RTXA6000-48GB": ("RTX A6000", 154.8, 48, 768, 300),
    "RTX6000ADA-48GB": ("RTX 6000 Ada", 364.2, 48, 960, 300),
}

REQUIRED = [
    "A100-40GB", "A100-80GB", "A800-80GB", "H100-80GB", "H800-80GB", "H20-96GB", "H200-141GB", "B200-180GB",
    "L40S-48GB", "L40-48GB", "L20-48GB", "L4-24GB", "A10-24GB", "A30-24GB", "T4-16GB", "V100-16GB",
    "V100-32GB", "RTX4090-24GB", "RTX4090D-24GB", "RTX3090-24GB", "RTX5090-32GB", "RTX5090D-32GB",
    "RTXA6000-48GB", "RTX6000ADA-48GB", "RTX3080-10GB", "RTX3080TI-12GB", "RTX2080TI-11GB", "RTXA4000-16GB",
    "RTXPRO6000-96GB", "P40-24GB", "P4-8GB", "P100-16GB",
]  # fmt: skip


def test_required_models_present_and_names_unique():
    names = [m.name for m in catalog.all_models()]
    assert len(names) == len(set(names))
    assert set(REQUIRED) <= set(names)


@pytest.mark.parametrize(("name", "row"), SPECS.items())
def test_specs_copied_from_gpu_specs(name, row):
    _, dense, memory, bandwidth, tdp = row
    model = get_model(name)
    assert (model.dense_tflops, model.memory_gb, model.bandwidth_gbps, model.tdp_watts) == (
        dense,
        memory,
        bandwidth,
        tdp,
    )
    assert model.spec_source and row[0] in model.spec_source


SHARED_SPECS = Path("/work/shared/reference/gpu_specs.csv")


@pytest.mark.skipif(not SHARED_SPECS.exists(), reason="shared/reference/gpu_specs.csv is not on this machine")
def test_every_model_with_a_gpu_specs_row_has_its_dense_tflops():
    with SHARED_SPECS.open(newline="") as f:
        rows = {r["name"]: r for r in csv.DictReader(f)}
    for name, (row_name, *_) in SPECS.items():
        model = get_model(name)
        assert model.dense_tflops == float(rows[row_name]["bf16_fp16_dense_tflops"]), name
        assert model.fp32_tflops == float(rows[row_name]["fp32_tflops"]), name
        assert model.memory_type == rows[row_name]["memory_type"], name


def test_models_without_sourced_compute_leave_it_blank():
    for model in catalog.all_models():
        if model.name not in SPECS:
            assert model.dense_tflops is None, model.name
            assert model.spec_source, model.name  # the memory figure still names its source


# How each model's GPUs talk inside one machine (catalog.interconnect_label), the whole catalog.
INTERCONNECT = {
    "A100-40GB": "NVLink 600 GB/s",  # the SXM4 40GB of the cloud instances, through NVSwitch
    "A100-80GB": "NVLink 600 GB/s",
    "A800-80GB": "NVLink (cut) 400 GB/s",
    "H100-80GB": "NVLink 900 GB/s",
    "H800-80GB": "NVLink (cut) 400 GB/s",
    "H20-96GB": "NVLink 900 GB/s",  # cut compute, NVLink kept
    "H200-141GB": "NVLink 900 GB/s",
    "B200-180GB": "NVLink 1800 GB/s",
    "L40S-48GB": "PCIe only",
    "L40-48GB": "PCIe only",
    "L20-48GB": "PCIe only",
    "L4-24GB": "PCIe only",
    "A10-24GB": "PCIe only",
    "A30-24GB": "NVLink bridge 200 GB/s",
    "T4-16GB": "PCIe only",
    "V100-16GB": "NVLink 300 GB/s",
    "V100-32GB": "NVLink 300 GB/s",
    "P100-16GB": "unknown",
    "P40-24GB": "unknown",
    "P4-8GB": "unknown",
    "RTX4090-24GB": "PCIe only",
    "RTX4090D-24GB": "PCIe only",
    "RTX4090-48GB": "PCIe only",
    "RTX3090-24GB": "NVLink bridge 112.5 GB/s",
    "RTX3080TI-12GB": "unknown",
    "RTX3080-10GB": "unknown",
    "RTX2080TI-11GB": "unknown",
    "RTX5090-32GB": "PCIe only",
    "RTX5090D-32GB": "PCIe only",  # no row of its own: the 5090's, said in spec_source
    "RTXA6000-48GB": "NVLink bridge 112.5 GB/s",
    "RTXA4000-16GB": "unknown",
    "RTX6000ADA-48GB": "PCIe only",
    "RTXPRO6000-96GB": "unknown",
    "RTXPRO6000D-84GB": "unknown",
}


def test_interconnect_label_for_every_model():
    assert {m.name: catalog.interconnect_label(m) for m in catalog.all_models()} == INTERCONNECT


def test_interconnect_fields():
    a800, h800, a100 = get_model("A800-80GB"), get_model("H800-80GB"), get_model("A100-80GB")
    assert (a800.interconnect, a800.nvlink_gbps_bidir) == ("NVLink (cut); PCIe Gen4", 400)
    assert (h800.interconnect, h800.nvlink_gbps_bidir) == ("NVLink (cut); PCIe Gen5", 400)
    assert (a100.interconnect, a100.nvlink_gbps_bidir) == ("NVLink3 via NVSwitch; PCIe Gen4", 600)
    rtx = get_model("RTX4090-24GB")
    assert (rtx.interconnect, rtx.nvlink_gbps_bidir) == ("PCIe Gen4 x16; no NVLink", None)
    p100 = get_model("P100-16GB")
    assert (p100.interconnect, p100.nvlink_gbps_bidir) == (None, None)  # unknown, not guessed
    assert "interconnect only: as the RTX 5090" in get_model("RTX5090D-32GB").spec_source
    for model in catalog.all_models():
        if model.nvlink_gbps_bidir is not None:
            assert "NVLink" in model.interconnect, model.name


# gpu_specs.csv has no A100 SXM4 40GB row: the cloud A100-40GB (8-GPU NVSwitch servers) takes the PCIe 40GB
# row's compute and the SXM 80GB row's interconnect (the same NVLink3 module), at the SXM4 40GB's 400 W.
SXM_OF_A_PCIE_ROW = {"A100-40GB": "A100 SXM 80GB"}


@pytest.mark.skipif(not SHARED_SPECS.exists(), reason="shared/reference/gpu_specs.csv is not on this machine")
def test_interconnect_copied_from_the_gpu_specs_row_named_in_spec_source():
    with SHARED_SPECS.open(newline="") as f:
        rows = {r["name"]: r for r in csv.DictReader(f)}
    copied = 0
    for model in catalog.all_models():
        if not model.spec_source.startswith("gpu_specs.csv row '"):
            continue
        row = rows[model.spec_source.split("'")[1]]
        if model.name in SXM_OF_A_PCIE_ROW:  # the row's compute, the SXM module's power and NVLink
            assert model.interconnect == rows[SXM_OF_A_PCIE_ROW[model.name]]["interconnect"], model.name
            assert model.tdp_watts == 400 and "SXM4 40GB" in model.spec_source
            copied += 1
            continue
        # One spacing fix: the H800 row reads "NVLink (cut) ; PCIe Gen5".
        assert model.interconnect == row["interconnect"].replace(" ;", ";"), model.name
        nvlink = float(row["nvlink_gbps_bidir"]) if row["nvlink_gbps_bidir"] else None
        assert model.nvlink_gbps_bidir == nvlink, model.name
        copied += 1
    assert copied == len(SPECS) == 23


def test_names_families_and_memory_agree():
    for model in catalog.all_models():
        family, memory = model.name.rsplit("-", 1)
        assert model.family == family
        assert memory == f"{model.memory_gb:g}GB"
        assert canonical_name(model.name) == model.name
        assert _picked(resolve_query(model.name)) == [(model.name, False)]


def test_china_variants():
    variants = {m.name: m.variant_of for m in catalog.all_models() if m.variant_of}
    assert variants == {
        "A800-80GB": "A100-80GB",
        "H800-80GB": "H100-80GB",
        "RTX4090D-24GB": "RTX4090-24GB",
        "RTX4090-48GB": "RTX4090-24GB",  # the China-market rebuild with 48 GB
        "RTX5090D-32GB": "RTX5090-32GB",
        "RTXPRO6000D-84GB": "RTXPRO6000-96GB",
    }
    for name in variants:
        assert "China-specific" in get_model(name).china_note
    for name in ("H20-96GB", "L20-48GB"):
        assert get_model(name).variant_of is None
        assert "China-specific" in get_model(name).china_note


def test_bf16_support():
    no_bf16 = {m.name for m in catalog.all_models() if not m.has_bf16}
    assert no_bf16 == {
        "T4-16GB",
        "V100-16GB",
        "V100-32GB",
        "P100-16GB",
        "P40-24GB",
        "P4-8GB",
        "RTX2080TI-11GB",
    }


def test_purchase_prices():
    h20 = get_model("H20-96GB")  # an 8-GPU server listed at 1.09M CNY (2026-08-22) / 8
    assert h20.purchase_price_cny == Decimal("136250") and h20.purchase_price_date == "2026-08-22"
    assert "server included" in h20.purchase_price_source
    assert (h20.purchase_price_obtained, h20.purchase_price_confidence) == ("observed", "low")
    assert h20.purchase_price_usd == Decimal("12000")
    a100 = get_model("A100-80GB")  # an 8-GPU server's 0.9-1.4M CNY estimate (2026-08-21): the median / 8
    assert a100.purchase_price_cny == Decimal("143750") and a100.purchase_price_date == "2026-08-21"
    assert "server included" in a100.purchase_price_source and a100.purchase_price_usd == Decimal("10000")
    # the two 2026 figures that are the middle of an estimate band say so
    assert (
        a100.purchase_price_obtained
        == get_model("RTX5090-32GB").purchase_price_obtained
        == "estimate midpoint"
    )
    assert get_model("RTX4090D-24GB").purchase_price_date == "2023-12-28"
    assert get_model("L40S-48GB").purchase_price_cny is None
    for model in catalog.all_models():
        priced = model.purchase_price_cny is not None or model.purchase_price_usd is not None
        assert priced == (model.purchase_price_date is not None) == (model.purchase_price_source is not None)
        assert priced == (model.purchase_price_obtained in ("observed", "estimate midpoint", "list price"))
        assert priced == (model.purchase_price_confidence in ("high", "medium", "low"))


def test_get_model_takes_canonical_names_only():
    assert get_model("A100-80GB").family == "A100"
    for name in ("A100", "a100-80gb", "NVIDIA A100 80GB"):
        with pytest.raises(KeyError):
            get_model(name)


def test_families():
    fams = catalog.families()
    assert fams[:3] == ["A100", "A800", "H100"]
    assert len(fams) == len(set(fams))
    assert {"RTX4090", "RTX4090D", "H20", "L20"} <= set(fams)
    assert "A100-80GB" not in fams


def test_data_ships_as_package_resource():
    resource = resources.files("planner").joinpath("data/gpus.csv")
    assert resource.is_file()
    rows = list(csv.DictReader(resource.read_text(encoding="utf-8").splitlines()))
    assert [r["name"] for r in rows] == [m.name for m in catalog.all_models()]


def test_import_is_cheap_and_lazy():
    code = (
        "import sys, planner.catalog as c; "
        "loaded = {m.split('.')[0] for m in sys.modules}; "
        "heavy = {'pandas', 'numpy', 'sqlalchemy', 'click', 'requests'} & loaded; "
        "print(sorted(heavy), c._catalog.cache_info().currsize)"
    )
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo
    ).stdout
    assert out.strip() == "[] 0"


def test_purchase_prices_of_today_where_sourced_and_their_age():
    """China street or distributor prices from 2025-2026 (shared/data/purchase_prices_2026.json, and 8-GPU
    server estimates of a public daily report for the A100 80GB and RTX 5090)."""
    recent = {
        m.name: m for m in catalog.all_models() if (catalog.purchase_price_day(m) or dt.date.min).year >= 2025
    }
    expected = {"RTX4090-24GB", "H20-96GB", "H200-141GB", "RTX5090D-32GB", "RTX5090-32GB", "A100-80GB"}
    assert expected <= set(recent)
    assert all(m.purchase_price_cny is not None for m in recent.values())  # China prices, not a US MSRP
    assert get_model("RTX5090-32GB").purchase_price_cny == Decimal("42500")  # 340000 per 8-GPU machine / 8
    assert get_model("RTX4090-24GB").purchase_price_cny == Decimal("17800")
    today = dt.date(2026, 12, 1)
    assert catalog.stale_purchase_price_note(get_model("RTX4090-24GB"), today) is None
    assert "dates from 2023-10, 3 year(s) ago" in catalog.stale_purchase_price_note(
        get_model("H800-80GB"), today
    )
    assert catalog.stale_purchase_price_note(get_model("L20-48GB"), today) is None  # no price at all
    assert catalog.purchase_price_day(get_model("RTXA6000-48GB")) == dt.date(2020, 1, 1)  # a year alone
