"""The calibration table (docs/calibration.md) is recomputed from the published cases and must hold."""

from __future__ import annotations

from pathlib import Path

from planner.workload.calibration import (
    DECODE,
    MEMORY,
    RUNS,
    decode_rows,
    median_ratio,
    memory_rows,
    run_rows,
    updated_doc,
)
from planner.workload.steady_state import THROUGHPUT, throughput_rows

DOC = Path(__file__).resolve().parents[2] / "docs" / "calibration.md"


def test_pretraining_gpu_hours_within_1_3_at_the_median_and_1_6_everywhere():
    rows = run_rows(calibrated_only=True)
    assert len(rows) == len([c for c in RUNS if not c.not_calibrated]) >= 20
    assert 1 / 1.3 <= median_ratio(rows) <= 1.3
    for r in rows:
        assert 1 / 1.6 <= r["ratio"] <= 1.6, r
    # The set spans the generations, MoE and FP8 it calibrates.
    assert {r["gpu"] for r in rows} >= {"A100-80GB", "A100-40GB", "H100-80GB", "H800-80GB"}
    assert any("MoE" in r["case"] for r in rows) and any("FP8" in r["case"] for r in rows)


def test_only_the_named_runs_are_left_out_of_the_bounds():
    # A run is kept out of the bounds only with a stated reason: Llama 3.2 (distillation) and, since
    # issue 27 fitted Hopper to steady-state throughput, the Llama 3/3.1 8B model-card hours.
    left_out = [c for c in RUNS if c.not_calibrated]
    assert [c.label for c in left_out] == ["Llama 3 8B", "Llama 3.1 8B", "Llama 3.2 1B", "Llama 3.2 3B"]
    assert all("distillation" in c.not_calibrated for c in left_out[2:])
    assert all("steady-state" in c.not_calibrated for c in left_out[:2])
    assert len(run_rows()) == len(RUNS)  # still shown in the table


def test_steady_state_throughput_within_1_3_at_the_median_and_1_6_everywhere():
    """Issue 27: pretraining (dense, MoE, FP8) and LoRA on Hopper, against NVIDIA's published tables."""
    rows = throughput_rows(calibrated_only=True)
    assert len(rows) >= 10
    assert 1 / 1.3 <= median_ratio(rows) <= 1.3
    for r in rows:
        assert 1 / 1.6 <= r["ratio"] <= 1.6, r
    tasks = {c.task for c in THROUGHPUT if not c.not_calibrated}
    assert tasks == {"pretrain", "lora"}
    assert {c.precision for c in THROUGHPUT} == {"bf16", "fp8"}
    assert any("MoE" in c.label for c in THROUGHPUT if not c.not_calibrated)
    assert all(c.source for c in THROUGHPUT)


def test_memory_within_1_5_moe_included():
    rows = memory_rows()
    assert len(rows) == len(MEMORY)
    for r in rows:
        assert 1 / 1.5 <= r["ratio"] <= 1.5, r
    assert any(c.model in ("mixtral-8x7b", "deepseek-v2") for c in MEMORY)


def test_decode_speed_within_1_3_on_one_and_several_gpus():
    rows = decode_rows()
    assert len(rows) == len(DECODE) >= 10
    for r in rows:
        assert 1 / 1.3 <= r["ratio"] <= 1.3, r
    assert {c.gpus for c in DECODE} == {1, 2, 4}  # the collectives' latency is calibrated too
    assert {r["bound"] for r in rows} == {"latency", "memory bandwidth"}


def test_docs_table_is_the_recomputed_one():
    doc = DOC.read_text(encoding="utf-8")
    assert updated_doc(doc) == doc, (
        "out of date: python -m planner.workload.calibration --write docs/calibration.md"
    )


def test_every_calibration_set_together_within_1_3_at_the_median_and_1_6_at_worst():
    """Issue 27's bar, across pretraining, fine-tuning (steady state), inference memory and decode speed."""
    ratios = [r["ratio"] for r in run_rows(calibrated_only=True) + throughput_rows(calibrated_only=True)]
    ratios += [r["ratio"] for r in memory_rows() + decode_rows()]
    assert len(ratios) >= 50
    median = sorted(ratios)[len(ratios) // 2]
    assert 1 / 1.3 <= median <= 1.3
    assert all(1 / 1.6 <= r <= 1.6 for r in ratios)
