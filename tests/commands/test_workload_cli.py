"""``planner estimate``, ``plan`` and ``tco`` as a user meets them: hand-computed answers, the three
formats, the first run on the bundled snapshot, and one clear line (exit 2) for every mistake."""

from __future__ import annotations

import csv
import io
import json
import re
from decimal import Decimal

import pytest

from tests.conftest import price_row, write_csv
from tests.helpers.cli import line_of

# 7B LoRA with the defaults (bf16, seq 2048, batch 1, checkpointing; shape 33 layers x 4224 hidden):
ADAPTERS = 18 * 16 * 4224 * 33  # rank-16 adapters on every linear layer
SBH = 2048 * 4224
LORA_PARTS = {
    "weights": (7e9 * 2 + ADAPTERS * 2) / 1e9,
    "gradients": ADAPTERS * 2 / 1e9,
    "optimizer_states": ADAPTERS * 12 / 1e9,
    # the plain loss (issue 27): bf16 logits 2 + fp32 upcast 4 + log-softmax 4 + its gradient 4 = 14 bytes
    "activations": (2 * SBH * 33 + 34 * SBH + 32_000 * 2048 * 14) / 1e9,
    "kv_cache": 0.0,
}
LORA_PARTS["overhead"] = 0.1 * sum(LORA_PARTS.values())
LORA_MEMORY_GB = sum(LORA_PARTS.values())  # 18.07
# FLOPs per LoRA-trained token: 4·N (frozen weights get no weight gradients, issue 27) plus PaLM's
# attention term 12·layers·seq·hidden for that shape.
FLOPS_PER_TOKEN_7B = 4 * 7e9 + 12 * 33 * 2048 * 4224


def ok(result):
    assert result.exit_code == 0, result.output
    return result.stdout


def load(run_cli, tmp_path, rows):
    ok(run_cli("import", str(write_csv(tmp_path / "prices.csv", rows))))


# --- estimate ---


def test_estimate_json_matches_hand_computation(run_cli):
    doc = json.loads(
        ok(
            run_cli(
                "estimate",
                "--params",
                "7B",
                "--tokens",
                "2B",
                "--task",
                "lora",
                "--gpu",
                "RTX4090",
                "--format",
                "json",
            )
        )
    )
    assert doc["memory_gb"] == pytest.approx(LORA_MEMORY_GB)
    assert doc["breakdown"] == pytest.approx(LORA_PARTS)
    assert doc["gpus_needed"] == 1 and doc["gpus"] == 1 and doc["gpu"] == "RTX4090-24GB"
    assert doc["flops"] == pytest.approx(FLOPS_PER_TOKEN_7B * 2e9)
    assert doc["mfu"] == 0.336  # LoRA on a consumer card: 0.8 × the data-centre 0.42 (issue 27)
    assert doc["gpu_hours"] == pytest.approx(FLOPS_PER_TOKEN_7B * 2e9 / (165.2e12 * 0.336 * 3600))  # 314.5
    assert doc["wall_hours"] == pytest.approx(doc["gpu_hours"])
    assert doc["formulas"]["gpus_needed"] == "ceil(18.1 / (24 × 1)) = 1"


def test_estimate_on_k_gpus_and_mfu_override(run_cli):
    doc = json.loads(
        ok(
            run_cli(
                "estimate",
                "--params",
                "70B",
                "--tokens",
                "20B",
                "--task",
                "full",
                "--gpu",
                "A100-80GB",
                "--gpus",
                "64",
                "--mfu",
                "0.5",
                "--network-gbps",
                "3200",
                "--format",
                "json",
            )
        )  # fmt: skip
    )
    # On an RDMA cluster (3200 Gbit/s a machine) the step is compute-bound (planner.workload.communication).
    # the shape --params 70B assumes: 71 layers x 9088 hidden; attention 12·layers·seq·hidden per token
    gpu_hours = (6 * 70e9 + 12 * 71 * 2048 * 9088) * 20e9 / (312e12 * 0.5 * 3600)
    assert doc["gpu_hours"] == pytest.approx(gpu_hours)
    assert doc["wall_hours"] == pytest.approx(gpu_hours / 64)
    assert doc["gpus_needed"] == 16 and doc["fits"] is True
    assert doc["mfu_source"] == "given"


def test_estimate_table_csv_and_explain(run_cli):
    args = ("estimate", "--params", "7B", "--tokens", "2B", "--task", "lora", "--gpu", "RTX4090")
    table = ok(run_cli(*args))
    assert "lora of a 7.0B-parameter model" in table and "on 2.0B tokens" in table
    assert "total               18.1" in table
    assert "GPUs needed       1 (18.1 of 24 GB)" in table
    assert "GPU-hours         314.5" in table
    wall = line_of(table, "Wall-clock hours")
    assert "314.5 on 1 GPU(s)" in wall and "(13.1 days)" in wall
    explained = ok(run_cli(*args, "--explain"))
    # FLOPs / (peak × MFU × s/h) × overhead: each input and the result
    formula = line_of(explained, "gpu_hours:")
    assert all(f in formula for f in ("6.29e+19", "165.2e12", "× 0.336 ×", "= 314.5")), formula
    rows = list(csv.DictReader(io.StringIO(ok(run_cli(*args, "--format", "csv")))))
    assert len(rows) == 1 and rows[0]["gpu"] == "RTX4090-24GB" and rows[0]["gpus_needed"] == "1"
    assert float(rows[0]["memory_gb"]) == pytest.approx(LORA_MEMORY_GB)


def test_estimate_memory_only_and_too_few_gpus(run_cli):
    memory = ok(run_cli("estimate", "--params", "70B", "--task", "qlora"))
    assert "Give --tokens D (and --gpu)" in memory
    doc = json.loads(ok(run_cli("estimate", "--params", "70B", "--task", "qlora", "--format", "json")))
    assert doc["memory_gb"] < 48 and doc["gpu_hours"] is None and doc["flops"] is None
    short = ok(
        run_cli(
            "estimate",
            "--params",
            "70B",
            "--tokens",
            "1B",
            "--task",
            "full",
            "--gpu",
            "A100-80GB",
            "--gpus",
            "4",
        )
    )
    assert "Note: 4 × A100-80GB cannot hold" in short


def test_estimate_kv_heads_shrink_the_inference_cache(run_cli):
    args = ("estimate", "--params", "70B", "--task", "inference", "--seq-len", "4096", "--format", "json")
    mha = json.loads(ok(run_cli(*args)))
    gqa = json.loads(ok(run_cli(*args, "--kv-heads", "8")))
    assert gqa["shape"]["kv_heads"] == 8
    assert gqa["breakdown"]["kv_cache"] == pytest.approx(
        mha["breakdown"]["kv_cache"] * 8 / mha["shape"]["kv_heads"]
    )
    # 2 (K, V) x layers x 8 KV heads x 128 head_dim x 4096 tokens x 2 bytes (workloads.md §2.5)
    assert gqa["breakdown"]["kv_cache"] == pytest.approx(
        2 * gqa["shape"]["layers"] * 8 * 128 * 4096 * 2 / 1e9
    )


# --- plan ---

# Priced so the ranking is T4 (600), A100 (666), RTX 4090 (786), H800 (965) under issue 27's defaults.
PLAN_ROWS = [
    price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB", price="5"),
    price_row(provider="tencent", region="ap-beijing", instance_type="A100x1", gpu_model="A100-80GB", price="10"),
    price_row(provider="aliyun", region="cn-beijing", instance_type="H800x8", gpu_model="H800-80GB", gpu_count=8, price="400"),
    price_row(provider="tencent", region="ap-shanghai", instance_type="T4x1", gpu_model="T4-16GB", billing="monthly", price="300"),
]  # fmt: skip
TCO_4090 = PLAN_ROWS[0] | {"price": "2"}  # the tco tests' rental: autodl RTX 4090 at 2 CNY per hour
LORA_1B = ("plan", "--params", "7B", "--tokens", "1B", "--task", "lora")


def lora_hours(peak: float, mfu: float) -> float:
    return FLOPS_PER_TOKEN_7B * 1e9 / (peak * 1e12 * mfu * 3600)


# LoRA MFU (issue 27): 0.8 × 0.42 on GeForce; 0.42 on Ampere, scaled by the generation's pretraining MFU
# at 7B over Ampere's 0.46: Hopper 0.50 (flat from 5B to 70B); Volta/Turing 0.25 (planner.workload.estimate).
RTX4090_LORA_MFU = 0.42 * 0.8
H800_LORA_MFU, T4_LORA_MFU = round(0.42 * 0.50 / 0.46, 4), round(0.42 * 0.25 / 0.46, 4)
# The two T4s are 1-GPU instances: a step gathers the sharded weights twice over the assumed 25 Gbit/s
# network, 2 × 7e9 × 2 bytes × 1/2 / 3.125 GB/s = 4.48 s, against 4.34 s of compute (issue 27).
T4_SLOWDOWN = (2 * 7e9 * 2 / 2 / (25 / 8 * 1e9)) / (FLOPS_PER_TOKEN_7B * 2048 / (65e12 * T4_LORA_MFU))


def test_plan_json_ranks_marks_and_costs(run_cli, tmp_path):
    load(run_cli, tmp_path, PLAN_ROWS)
    doc = json.loads(ok(run_cli(*LORA_1B, "--format", "json")))
    options = doc["options"]
    assert [o["gpu_model"] for o in options] == ["T4-16GB", "A100-80GB", "RTX4090-24GB", "H800-80GB"]
    totals = [o["total_cny"] for o in options]
    assert totals == [
        600,  # 2 T4s (16 GB < 18.1) for 294 h: one month each
        round(10 * lora_hours(312, 0.42), 2),
        round(5 * lora_hours(165.2, RTX4090_LORA_MFU), 2),
        round(50 * lora_hours(989, H800_LORA_MFU), 2),  # all 8 GPUs of the instance: 400 CNY/h / 8
    ]
    assert [o["fastest"] for o in options] == [False, False, False, True]
    assert [o["pareto"] for o in options] == [True, True, False, True]
    assert options[3]["gpus"] == 8 and options[3]["gpus_needed"] == 1
    assert options[3]["wall_hours"] == pytest.approx(lora_hours(989, H800_LORA_MFU) / 8)
    assert options[0]["wall_hours"] == pytest.approx(lora_hours(65, T4_LORA_MFU) * T4_SLOWDOWN / 2)
    assert doc["workload"]["memory_gb"] == pytest.approx(LORA_MEMORY_GB)
    assert doc["from_snapshot"] is False


def test_plan_table_and_csv(run_cli, tmp_path):
    load(run_cli, tmp_path, PLAN_ROWS)
    table = ok(run_cli(*LORA_1B))
    cheapest = line_of(table, "Cheapest:")
    t4_hours = f"{lora_hours(65, T4_LORA_MFU) * T4_SLOWDOWN / 2:.1f} h"
    assert all(f in cheapest for f in ("2 x T4-16GB", t4_hours, "CNY 600.00", "tencent T4x1", "monthly"))
    assert f"Fastest:  8 x H800-80GB for {lora_hours(989, H800_LORA_MFU) / 8:.1f} h" in table
    assert line_of(table, "Pareto").endswith(": T4-16GB, A100-80GB, H800-80GB")
    assert "fastest, pareto" in table
    t4_row, h800_row = plan_cells(table, "T4-16GB"), plan_cells(table, "H800-80GB")
    assert t4_row[3:5] == ["2 x 1", "network only"] and t4_row[-1] == "pareto"  # two 1-GPU instances
    assert h800_row[3:5] == ["1 x 8", "NVLink (cut) 400 GB/s"] and h800_row[-1] == "fastest, pareto"
    spread = ok(run_cli("plan", "--params", "70B", "--tokens", "1B", "--task", "full", "--gpu", "A100-80GB"))
    assert plan_cells(spread, "A100-80GB")[3:5] == ["16 x 1", "network only"]  # 16 GPUs on 1-GPU instances
    assert line_of(table, "No prices:").split(": ", 1)[1].startswith("A100-40GB, A800-80GB, H100-80GB")
    rows = list(csv.DictReader(io.StringIO(ok(run_cli(*LORA_1B, "--format", "csv")))))
    assert [r["gpu_model"] for r in rows] == ["T4-16GB", "A100-80GB", "RTX4090-24GB", "H800-80GB"]
    assert rows[0]["total_cny"] == "600.00" and rows[3]["fastest"] == "true"


def plan_cells(table: str, gpu: str) -> list[str]:
    """The cells of the plan table's row for ``gpu`` (cells are two or more spaces apart)."""
    line = next(line for line in table.splitlines() if re.match(rf"\s*\d+\s+{gpu}\*?\s", line))
    return re.split(r"\s{2,}", line.strip())


LINK_ROWS = [
    price_row(provider="aliyun", region="cn-beijing", instance_type="A800x8", gpu_model="A800-80GB", gpu_count=8, price="200"),
    price_row(provider="autodl", region="west-B", instance_type="RTX 4090 x4", gpu_model="RTX4090-24GB", gpu_count=4, price="8"),
    price_row(provider="tencent", region="ap-beijing", instance_type="A100x1", gpu_model="A100-80GB", price="10"),
    price_row(provider="aliyun", region="cn-hangzhou", instance_type="T4x1", gpu_model="T4-16GB", price="5"),
]  # fmt: skip
LINK_NOTE = "'link': how an option's GPUs talk"  # the link column's note


def test_plan_shows_the_link_beside_multi_gpu_options(run_cli, tmp_path):
    load(run_cli, tmp_path, LINK_ROWS)
    table = ok(run_cli(*LORA_1B))
    header = next(line for line in table.splitlines() if line.lstrip().startswith("#  gpu"))
    assert re.split(r"\s{2,}", header.strip())[:6] == ["#", "gpu", "GPUs", "instances", "link", "wall h"]
    links = {
        gpu: plan_cells(table, gpu)[3:5] for gpu in ("A800-80GB", "RTX4090-24GB", "A100-80GB", "T4-16GB")
    }
    assert links == {
        "A800-80GB": ["1 x 8", "NVLink (cut) 400 GB/s"],  # China A100: NVLink cut from 600
        "RTX4090-24GB": ["1 x 4", "PCIe only"],
        "A100-80GB": ["1 x 1", "-"],  # one GPU: no link to speak of
        "T4-16GB": ["2 x 1", "network only"],
    }
    assert LINK_NOTE in table and "a PCIe-packaged instance may have less" in table
    assert "over the provider's network, not NVLink" in table
    doc = json.loads(ok(run_cli(*LORA_1B, "--format", "json")))
    got = {o["gpu_model"]: (o["link"], o["nvlink_gbps_bidir"]) for o in doc["options"]}
    assert got == {
        "A800-80GB": ("NVLink (cut) 400 GB/s", 400),
        "RTX4090-24GB": ("PCIe only", None),
        "A100-80GB": (None, None),
        "T4-16GB": ("network only", None),
    }
    rows = {r["gpu_model"]: r for r in csv.DictReader(io.StringIO(ok(run_cli(*LORA_1B, "--format", "csv"))))}
    assert (rows["A800-80GB"]["link"], rows["A800-80GB"]["nvlink_gbps_bidir"]) == (
        "NVLink (cut) 400 GB/s",
        "400",  # a whole number is written as an integer, as in JSON
    )
    assert (rows["A100-80GB"]["link"], rows["A100-80GB"]["nvlink_gbps_bidir"]) == ("", "")


def test_plan_link_across_instances_and_single_gpu_plans(run_cli, tmp_path):
    load(run_cli, tmp_path, LINK_ROWS)
    big = ("plan", "--params", "70B", "--tokens", "1B", "--task", "full")
    table = ok(run_cli(*big, "--gpu", "A800"))
    assert plan_cells(table, "A800-80GB")[3:5] == ["2 x 8", "NVLink (cut) 400 GB/s + network"]
    cheapest = line_of(table, "Cheapest:")
    assert "2 x aliyun A800x8" in cheapest and "NVLink (cut) 400 GB/s + network" in cheapest
    doc = json.loads(ok(run_cli(*big, "--gpu", "A800", "--format", "json")))
    assert doc["options"][0]["link"] == "NVLink (cut) 400 GB/s + network"
    assert doc["options"][0]["nvlink_gbps_bidir"] == 400  # inside each 8-GPU instance
    single = ok(run_cli(*LORA_1B, "--gpu", "A100"))
    assert plan_cells(single, "A100-80GB")[4] == "-"
    assert LINK_NOTE not in single and "NVLink" not in single  # no multi-GPU option, no note


def test_plan_budget_and_deadline(run_cli, tmp_path):
    load(run_cli, tmp_path, PLAN_ROWS)
    cheap = json.loads(ok(run_cli(*LORA_1B, "--budget", "630", "--format", "json")))
    assert [o["gpu_model"] for o in cheap["options"]] == ["T4-16GB"]
    assert {e["gpu_model"] for e in cheap["excluded"]} == {"RTX4090-24GB", "H800-80GB", "A100-80GB"}
    quick = json.loads(ok(run_cli(*LORA_1B, "--deadline-hours", "20", "--format", "json")))
    assert all(o["wall_hours"] <= 20 for o in quick["options"])
    assert {o["gpu_model"]: o["gpus"] for o in quick["options"]}["RTX4090-24GB"] == 8
    capped = ok(run_cli(*LORA_1B, "--deadline-hours", "20", "--gpus-max", "4"))
    for gpu, needed in (("RTX4090-24GB", 8), ("T4-16GB", 30)):
        left_out = line_of(capped, f"Left out: {gpu}:")
        assert f"needs {needed} GPUs" in left_out and "20 h" in left_out and "the 4 allowed" in left_out
    none = run_cli(*LORA_1B, "--budget", "10", "--format", "json")
    assert none.exit_code == 1 and json.loads(none.stdout)["options"] == []  # nothing to recommend
    assert "No GPU with prices" in run_cli(*LORA_1B, "--budget", "10").stdout


def test_first_plan_and_tco_answer_from_the_bundled_snapshot(run_cli):
    result = run_cli(*LORA_1B, "--format", "json")
    assert "loaded the bundled snapshot" in result.stderr
    doc = json.loads(ok(result))
    assert doc["from_snapshot"] is True and len(doc["options"]) >= 5
    assert sum(o["fastest"] for o in doc["options"]) == 1 and any(o["pareto"] for o in doc["options"])
    tco = json.loads(ok(run_cli("tco", "--gpu", "RTX4090", "--hours", "3000", "--format", "json")))
    assert tco["from_snapshot"] is True and tco["rental"]["gpu_model"] == "RTX4090-24GB"
    assert "bundled snapshot" in ok(run_cli("tco", "--gpu", "RTX4090", "--hours", "3000"))


# --- tco ---

# RTX 4090 with every default: 17,800 CNY (catalog, 2026), 5,000 host, 500/yr hosting, 0.67^3 resale, 450 W.
PRICE, HOST, HOSTING = Decimal(17800), Decimal(5000), Decimal(500) * 3
RESALE = PRICE * Decimal("0.67") ** 3
AT_TDP = Decimal("0.45") * Decimal("1.3") * Decimal("1.5") * Decimal("0.64")  # CNY per hour at TDP
IDLE = AT_TDP * Decimal("0.2") * 26280
VARIABLE = AT_TDP * Decimal("0.8")
FIXED = PRICE + HOST + HOSTING - RESALE + IDLE


def test_tco_json_matches_hand_computation(run_cli, tmp_path):
    load(run_cli, tmp_path, [TCO_4090])  # autodl RTX 4090 at 2 CNY per hour
    doc = json.loads(ok(run_cli("tco", "--gpu", "RTX4090", "--hours", "3000", "--format", "json")))
    assert doc["buy_total_cny"] == float(round(FIXED + VARIABLE * 3000, 2))  # 23,246.03
    assert doc["rent_total_cny"] == 6000
    assert doc["rent_cny_per_gpu_hour"] == 2
    assert doc["break_even_hours"] == float(round(FIXED / (2 - VARIABLE), 1))  # 14,121.3
    assert doc["recommendation"] == "rent"
    assert doc["buy_breakdown"]["resale"] == float(round(-RESALE, 2))
    assert doc["rental"]["provider"] == "autodl" and doc["rental"]["billing"] == "on_demand"
    assert doc["from_snapshot"] is False
    at_be = json.loads(
        ok(run_cli("tco", "--gpu", "RTX4090", "--hours", str(doc["break_even_hours"]), "--format", "json"))
    )
    assert at_be["buy_total_cny"] == pytest.approx(at_be["rent_total_cny"], rel=1e-4)


def test_tco_rents_at_the_30_day_median_where_history_exists(run_cli, tmp_path):
    history = [("2026-10-10", "2.2"), ("2026-10-20", "2.1"), ("2026-11-01", "2.0")]
    load(run_cli, tmp_path, [TCO_4090 | {"observed_at": day, "price": p} for day, p in history])
    doc = json.loads(ok(run_cli("tco", "--gpu", "RTX4090", "--hours", "3000", "--format", "json")))
    assert doc["rent_total_cny"] == 6300 and doc["rental"]["price_basis"] == "median"
    assert doc["rental"]["recent"]["trend"] == "down"
    table = ok(run_cli("tco", "--gpu", "RTX4090", "--hours", "3000"))
    renting = line_of(table, "Renting:")  # the price basis, its window and the latest price it replaced
    assert all(
        f in renting for f in ("on_demand at 2.1 CNY/hour", "30-day median of 3 observations", "latest 2")
    )
    latest = json.loads(
        ok(
            run_cli(
                "tco", "--gpu", "RTX4090", "--hours", "3000", "--price-basis", "latest", "--format", "json"
            )
        )
    )
    assert latest["rent_total_cny"] == 6000


def test_tco_flags_and_config_change_the_assumptions(run_cli, tmp_path):
    load(run_cli, tmp_path, [TCO_4090])
    doc = json.loads(
        ok(
            run_cli(
                "tco",
                "--gpu",
                "RTX4090",
                "--gpus",
                "2",
                "--hours",
                "1000",
                "--years",
                "1",
                "--pue",
                "1",
                "--electricity",
                "1",
                "--resale",
                "0.5",
                "--purchase-price",
                "20K",
                "--format",
                "json",
            )
        )  # fmt: skip
    )
    power = Decimal("0.45") * Decimal("1.3") * (Decimal("0.2") * 8760 + Decimal("0.8") * 1000) * 2
    expected = 2 * (20000 + 5000 + 500 - 10000) + power
    assert doc["buy_total_cny"] == float(round(expected, 2))
    assert doc["gpu_hours"] == 2000 and doc["rent_total_cny"] == 4000
    sources = {a["name"]: a["source"] for a in doc["assumptions"]}
    assert sources["PUE"] == "--pue" and sources["purchase price per GPU"] == "--purchase-price"
    (tmp_path / "cwd").mkdir(exist_ok=True)
    (tmp_path / "cwd" / "config.toml").write_text("[tco]\nelectricity_cny_per_kwh = 1.0\n", encoding="utf-8")
    configured = json.loads(ok(run_cli("tco", "--gpu", "RTX4090", "--hours", "1000", "--format", "json")))
    sources = {a["name"]: a["source"] for a in configured["assumptions"]}
    assert sources["electricity"] == "config.toml [tco] electricity_cny_per_kwh"


def test_tco_rent_price_needs_no_database_and_table_reads_well(run_cli):
    doc = json.loads(
        ok(run_cli("tco", "--gpu", "RTX4090", "--hours", "20000", "--rent-price", "2", "--format", "json"))
    )
    assert doc["recommendation"] == "buy" and doc["rental"] is None
    table = ok(run_cli("tco", "--gpu", "RTX4090", "--hours", "3000", "--rent-price", "2"))
    title = line_of(table, "Rent or buy")
    assert all(f in title for f in ("1 x RTX4090-24GB", "3,000 busy hours", "3 years", "(11% ")), title
    break_even = line_of(table, "Break-even:")
    assert "14,121 busy hours" in break_even and "(54% " in break_even
    recommendation = line_of(table, "Recommendation:")
    assert recommendation.startswith("Recommendation: rent")
    assert "7.75 CNY" in recommendation and "2.00" in recommendation
    assert "VAT" in table and "catalog, 2026-08-13" in table
    rows = list(
        csv.DictReader(
            io.StringIO(
                ok(
                    run_cli(
                        "tco", "--gpu", "RTX4090", "--hours", "3000", "--rent-price", "2", "--format", "csv"
                    )
                )
            )
        )
    )
    assert rows[0]["recommendation"] == "rent"
    assert rows[0]["break_even_hours"] == str(round(FIXED / (2 - VARIABLE), 1))


# --- mistakes: one line, a hint, exit 2, no traceback ---

E = ("estimate", "--params", "7B", "--task", "lora")
P = ("plan", "--params", "7B", "--task", "lora", "--tokens", "1B")
T = ("tco", "--gpu", "RTX4090")


@pytest.mark.parametrize(
    "args, message",
    [
        ((*E[:2], "-7B", *E[3:]), "--params must be positive"),
        ((*E[:2], "0", *E[3:]), "--params must be positive"),
        ((*E[:2], "seven", *E[3:]), "--params 'seven' is not a number"),
        ((*E[:2], "7", *E[3:]), "--params 7 is less than 1.0M"),
        ((*E[:2], "1e20", *E[3:]), "--params 100000000.0T is more than 100.0T"),
        ((*E[:2], "1e400", *E[3:]), "--params '1e400' is far too large"),
        ((*E[:2], "nan", *E[3:]), "--params 'nan' is not finite"),
        ((*E, "--tokens", "-2B"), "--tokens must be positive"),
        ((*E, "--tokens", "1e16"), "--tokens 10000.0T is more than 1000.0T"),
        (("estimate", "--params", "7B", "--task", "finetune"), "unknown task 'finetune'"),
        (("estimate", "--params", "7B", "--task", "lroa"), "did you mean lora"),
        ((*E, "--precision", "fp4"), "unknown precision 'fp4'"),
        (("estimate", "--params", "7B", "--task", "qlora", "--precision", "bf16"), "cannot use precision"),
        ((*E, "--gpu", "A1000"), "unknown GPU 'A1000'"),
        ((*E, "--gpu", "A100"), "ambiguous GPU 'A100'"),
        ((*E, "--tokens", "1B", "--gpu", "RTX4090", "--mfu", "0"), "--mfu must be in (0, 1]"),
        ((*E, "--tokens", "1B", "--gpu", "RTX4090", "--mfu", "1.5"), "--mfu must be in (0, 1]"),
        ((*E, "--tokens", "1B", "--gpu", "RTX4090", "--mfu", "high"), "--mfu 'high' is not a number"),
        ((*E, "--tokens", "1B", "--gpu", "RTX4090", "--mfu", "inf"), "--mfu 'inf' is not finite"),
        ((*E, "--gpu", "RTX4090", "--gpus", "0"), "--gpus must be positive"),
        ((*E, "--gpu", "RTX4090", "--gpus", "2.5"), "--gpus must be a whole number"),
        ((*E, "--gpu", "RTX4090", "--gpus", "1e6"), "--gpus 1.0M is more than 50.0K"),
        ((*E, "--gpus", "4"), "--gpus needs --gpu"),
        # the hint gives a value of the flag itself, not a parameter count
        (
            (*E, "--tokens", "1B", "--gpu", "A100-80GB", "--gpus", "16", "--network-gbps", "0"),
            "e.g. --network-gbps 25",
        ),
        ((*E, "--mfu", "0.3"), "--mfu changes only the hours"),
        ((*E, "--seq-len", "0"), "--seq-len must be positive"),
        ((*E, "--seq-len", "4.5"), "--seq-len must be a whole number"),
        ((*E, "--batch", "-1"), "--batch must be positive"),
        ((*E, "--kv-heads", "64"), "--kv-heads must be from 1 to 33"),
        (("estimate", "--params", "7B"), "Missing option '--task'"),
        # issue 27: --tokens or a serving load (--concurrency), so the plan, not click, asks for one
        (
            ("plan", "--params", "7B", "--task", "lora"),
            "a plan needs the tokens the job processes, or a serving load",
        ),
        ((*P, "--budget", "0"), "--budget must be positive"),
        ((*P, "--budget", "lots"), "--budget 'lots' is not a number"),
        ((*P, "--deadline-hours", "0"), "--deadline-hours must be positive"),
        ((*P, "--deadline-hours", "1e6"), "ten years"),
        ((*P, "--gpus-max", "0"), "--gpus-max must be positive"),
        ((*P, "--provider", "aws"), "unknown provider 'aws'"),
        ((*P, "--billing", "fortnightly"), "unknown billing mode"),
        ((*P, "--gpu", "H8OO"), "unknown GPU 'H8OO'"),
        (("plan", "--params", "7B", "--task", "train", "--tokens", "1B"), "unknown task 'train'"),
        ((*P, "--task", "full"), "--task given more than once"),  # never "the last one wins"
        ((*T, "--hours", "-5"), "--hours must be positive"),
        ((*T, "--hours", "0"), "--hours must be positive"),
        ((*T, "--hours", "many"), "--hours 'many' is not a number"),
        ((*T, "--hours", "30000"), "26,280 hours in 3 years, not 30,000"),
        ((*T, "--utilization", "1.5"), "--utilization must be between 0 and 1"),
        ((*T, "--utilization", "0"), "--utilization must be between 0 and 1"),
        ((*T, "--hours", "100", "--utilization", "0.5"), "--hours or --utilization, exactly one"),
        (T, "--hours or --utilization, exactly one"),
        ((*T, "--hours", "100", "--resale", "1.5"), "--resale must be between 0 and 1"),
        ((*T, "--hours", "100", "--resale", "-0.1"), "--resale must be between 0 and 1"),
        ((*T, "--hours", "100", "--pue", "0.5"), "--pue must be at least 1"),
        ((*T, "--hours", "100", "--pue", "9"), "--pue must be at most 3"),
        ((*T, "--hours", "100", "--electricity", "-1"), "--electricity cannot be negative"),
        ((*T, "--hours", "100", "--years", "0"), "--years must be more than 0"),
        ((*T, "--hours", "100", "--years", "50"), "--years must be at most 10"),
        ((*T, "--hours", "100", "--gpus", "0"), "--gpus must be positive"),
        ((*T, "--hours", "100", "--purchase-price", "0"), "--purchase-price must be positive"),
        ((*T, "--hours", "100", "--purchase-price", "1e12"), "--purchase-price must be at most"),
        ((*T, "--hours", "100", "--rent-price", "0"), "(CNY per GPU-hour) must be more than 0"),
        (
            (*T, "--hours", "100", "--price-basis", "average"),
            "'average' is not one of 'latest', 'median', 'min'",
        ),
        (("tco", "--gpu", "L40S", "--hours", "100"), "no purchase price for L40S-48GB"),
        (("tco", "--gpu", "RTXA6000", "--hours", "100"), "no rental price for RTXA6000-48GB"),
        (("tco", "--gpu", "XYZ", "--hours", "100"), "unknown GPU 'XYZ'"),
        (("tco", "--hours", "100"), "Missing option '--gpu'"),
    ],
)
def test_mistakes_get_one_clear_line(run_cli, args, message):
    result = run_cli(*args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)
    if message.startswith("Missing option"):
        return
    lines = [line for line in result.stderr.strip().splitlines() if not line.startswith("Database empty")]
    assert lines[0].startswith("Error: ") and len(lines) <= 2
    assert len(lines) == 1 or lines[1].startswith("Hint: ")


def test_missing_purchase_price_and_rental_price_say_how_to_fix(run_cli):
    no_buy = run_cli("tco", "--gpu", "L40S", "--hours", "100")
    assert "--purchase-price" in line_of(no_buy.stderr, "Hint:")
    no_rent = run_cli("tco", "--gpu", "RTXA6000", "--hours", "100")
    assert "--rent-price" in line_of(no_rent.stderr, "Hint:")


# --- issue 15: catalog models, MoE, FP8, inference economics, training options ---


def test_llama_3_1_70b_bf16_inference_needs_two_a100s(run_cli):
    args = ("estimate", "--model", "llama-3.1-70b", "--task", "inference", "--gpu", "A100-80GB")
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert "GPUs needed       2 (" in result.output
    assert "8 KV heads of 128" in result.output and "config.json" in result.output
    decode = line_of(result.output, "Decode")
    assert "tokens/s per GPU at batch 1" in decode and "(memory bandwidth bound)" in decode
    doc = json.loads(ok(run_cli(*args, "--format", "json")))
    assert doc["gpus_needed"] == 2 and doc["bound"] == "memory bandwidth" and doc["tokens_per_gpu_s"] > 0


def test_deepseek_v3_fp8_and_mixtral_fp16_memory(run_cli):
    out = json.loads(
        run_cli(
            "estimate",
            "--model",
            "deepseek-v3",
            "--task",
            "inference",
            "--precision",
            "fp8",
            "--format",
            "json",
        ).output
    )
    assert out["memory_gb"] > 671 and out["active_params"] == 37e9 and out["model"] == "deepseek-v3"
    mixtral = json.loads(
        run_cli(
            "estimate",
            "--model",
            "mixtral-8x7b",
            "--task",
            "inference",
            "--precision",
            "fp16",
            "--format",
            "json",
        ).output
    )
    assert 90 < mixtral["memory_gb"] < 100


def test_params_says_what_it_assumed(run_cli):
    result = run_cli("estimate", "--params", "7B", "--task", "lora")
    assert result.exit_code == 0
    assert "a dense model (not MoE)" in line_of(result.output, "Assumed for --params:")


@pytest.mark.parametrize(
    "args, message, hint",
    [
        (["--task", "inference"], "give --model NAME or --params N", "planner models"),
        (["--model", "qwen25-7b", "--task", "inference"], "unknown model 'qwen25-7b'", "did you mean qwen2.5-7b"),
        (["--model", "qwen2.5-7b", "--params", "7B", "--task", "lora"], "give --model or --params, not both", "knows its parameters"),
        (["--model", "qwen3-8b", "--task", "pretrain", "--precision", "fp8", "--gpu", "A100-80GB", "--tokens", "1B"],
         "A100-80GB has no FP8 tensor cores", "use --precision bf16"),
        (["--model", "qwen3-8b", "--task", "full", "--overhead", "-1"], "--overhead must be from 0", "e.g."),
    ],
)  # fmt: skip
def test_user_mistakes_are_one_line_with_a_hint(run_cli, args, message, hint):
    result = run_cli("estimate", *args)
    assert result.exit_code == 2, result.output
    assert f"Error: {message}" in result.output and hint in result.output
    assert "Traceback" not in result.output


def test_training_options_on_the_command_line(run_cli):
    out = json.loads(
        run_cli(
            "estimate", "--params", "13B", "--task", "full", "--gpu", "A100-80GB", "--zero-stage", "2",
            "--optimizer-8bit", "--cpu-offload", "--format", "json",
        ).output
    )  # fmt: skip
    assert (
        out["zero_stage"] == 2
        and out["optimizer_8bit"] is True
        and out["cpu_offload_gb"] == pytest.approx(78 + 26)  # 8-bit Adam 6 + gradients 2 bytes (ZeRO-Offload)
    )
    lora = run_cli("estimate", "--model", "qwen2.5-7b", "--task", "lora", "--lora-rank", "64")
    assert "LoRA rank 64" in lora.output


def test_models_lists_the_catalog_in_every_format(run_cli):
    table = run_cli("models", "--family", "deepseek")
    assert table.exit_code == 0
    assert "deepseek-v3" in table.output and "MLA" in table.output and "latent 512+64" in table.output
    rows = json.loads(run_cli("models", "--format", "json").output)
    v3 = next(r for r in rows if r["name"] == "deepseek-v3")
    assert (v3["kv_lora_rank"], v3["qk_rope_head_dim"], v3["experts"]) == (512, 64, 256)
    assert v3["source"].startswith("huggingface.co/deepseek-ai/DeepSeek-V3")
    parsed = list(csv.DictReader(io.StringIO(run_cli("models", "--format", "csv").output)))
    assert len(parsed) == len(rows) >= 60
    bad = run_cli("models", "--family", "qwen4")
    assert bad.exit_code == 2 and "unknown model family" in bad.output
    assert "Examples:" in run_cli("models", "--help").output


def test_plan_inference_ranks_by_cny_per_million_tokens(run_cli, tmp_path):
    rows = [
        # Cheap per hour but slow (bandwidth 1008 GB/s) against dearer and faster (2039 GB/s).
        price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB", price="2"),
        price_row(provider="tencent", region="ap-beijing", instance_type="A100x1", gpu_model="A100-80GB", price="3"),
        # Monthly: a big total for a short job, but cheap per GPU-hour.
        price_row(provider="tencent", region="ap-shanghai", instance_type="L20x1", gpu_model="L20-48GB",
                  billing="monthly", price="300"),
    ]  # fmt: skip
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", rows))).exit_code == 0
    result = run_cli(
        "plan", "--model", "qwen2.5-7b", "--task", "inference", "--tokens", "10M", "--format", "json"
    )
    assert result.exit_code == 0, result.output
    options = json.loads(result.output)["options"]
    per_m = [o["cny_per_million_tokens_job"] for o in options]
    assert per_m == sorted(per_m) and all(p > 0 for p in per_m)
    # This job's figure is the total over the tokens: the ranking and the total agree.
    for o in options:
        assert o["cny_per_million_tokens_job"] == pytest.approx(
            float(o["total_cny"]) / 10, abs=0.001
        )  # cents
    monthly = next(o for o in options if o["rental"]["billing"] == "monthly")
    # The steady state spreads the month over its 730 hours: less than this 10M-token job pays.
    assert monthly["cny_per_million_tokens_steady_state"] < monthly["cny_per_million_tokens_job"]
    assert "cny_per_million_tokens" not in monthly
    text = run_cli("plan", "--model", "qwen2.5-7b", "--task", "inference", "--tokens", "10M").output
    assert "CNY/M tok (this job)" in text and "CNY/M tok (steady state)" in text
    assert "per million generated tokens" in text  # the ranking's basis, as in the JSON
    assert "split the heads over" in text  # serving GPU counts: what tensor parallelism can split


def test_plan_fp8_training_leaves_out_gpus_without_fp8(run_cli, tmp_path):
    rows = [
        price_row(provider="tencent", region="ap-beijing", instance_type="A100x1", gpu_model="A100-80GB", price="10"),
        price_row(provider="aliyun", region="cn-beijing", instance_type="H800x8", gpu_model="H800-80GB", gpu_count=8, price="240"),
    ]  # fmt: skip
    assert run_cli("import", str(write_csv(tmp_path / "p.csv", rows))).exit_code == 0
    args = ("plan", "--model", "qwen3-8b", "--task", "pretrain", "--tokens", "10B", "--precision", "fp8")
    out = json.loads(run_cli(*args, "--format", "json").output)
    assert [o["gpu_model"] for o in out["options"]] == ["H800-80GB"]
    assert out["options"][0]["peak_tflops"] == 1978
    # Since issue 27 the reason names the nearest precision the GPU has.
    assert {
        "gpu_model": "A100-80GB",
        "reason": "no FP8 tensor cores for FP8 precision (the nearest it has: bf16)",
    } in out["excluded"]
    text = run_cli(
        "estimate",
        "--model",
        "qwen3-8b",
        "--task",
        "pretrain",
        "--tokens",
        "10B",
        "--precision",
        "fp8",
        "--gpu",
        "H800",
    ).output
    assert "1978 dense FP8 TFLOPS" in text and "× 0.75 at the FP8 peak" in text
