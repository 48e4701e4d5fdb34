"""Any model (issue 27): ``--model path/to/config.json`` reads a Hugging Face config (dense, GQA, MoE,
MLA), and ``--params N --active-params M`` describes an MoE outside the catalogue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog import get_model
from planner.errors import UsageError
from planner.workload.architectures import get_spec
from planner.workload.estimate import estimate
from planner.workload.hf_config import read_config, spec_from_config

CONFIGS = Path(__file__).resolve().parents[1] / "fixtures" / "hf_configs"


@pytest.mark.parametrize(
    ("file", "total_b", "active_b", "attention"),
    [
        ("qwen2.5-7b.json", 7.61, 7.61, "gqa"),  # model card: 7.61B
        ("deepseek-v3.json", 671, 37, "mla"),  # 671B total, 37B active (without the 14B MTP module)
        ("qwen3-30b-a3b.json", 30.5, 3.3, "gqa"),
        ("mixtral-8x7b.json", 46.7, 12.9, "gqa"),
    ],
)
def test_parameters_counted_from_the_config_match_the_model_card(file, total_b, active_b, attention):
    spec = read_config(str(CONFIGS / file))
    assert spec.total_params / 1e9 == pytest.approx(total_b, rel=0.02)
    assert spec.active_params / 1e9 == pytest.approx(active_b, rel=0.03)
    assert spec.attention == attention
    catalogued = get_spec(file.removesuffix(".json"))
    assert spec.shape == catalogued.shape or spec.attention == "mla"  # MLA's head_dim is v_head_dim
    assert (spec.experts, spec.experts_per_token) == (catalogued.experts, catalogued.experts_per_token)


def test_a_config_estimate_is_the_catalogue_estimate(tmp_path):
    config = tmp_path / "Qwen2.5-7B" / "config.json"
    config.parent.mkdir()
    config.write_text((CONFIGS / "qwen2.5-7b.json").read_text())
    A100 = get_model("A100-80GB")
    from_file = estimate(model=str(config), task="lora", tokens=1e9, gpu=A100)
    from_catalogue = estimate(model="qwen2.5-7b", task="lora", tokens=1e9, gpu=A100)
    assert from_file.model == "Qwen2.5-7B"  # named by its folder, as downloaded
    assert from_file.memory_gb == pytest.approx(from_catalogue.memory_gb, rel=0.01)
    assert from_file.gpu_hours == pytest.approx(from_catalogue.gpu_hours, rel=0.01)


def test_a_moe_config_computes_with_its_active_parameters_and_caches_a_latent():
    e = estimate(model=str(CONFIGS / "deepseek-v3.json"), task="inference", precision="fp8")
    assert e.is_moe and e.breakdown["weights"] >= 671
    assert e.shape.kv_lora_rank == 512


@pytest.mark.parametrize(
    ("content", "match"),
    [
        ("{not json", "cannot read"),
        ('{"hidden_size": 4096}', "no num_hidden_layers"),
        ("[1, 2]", "not a model config"),
    ],
)
def test_a_bad_config_is_one_line(tmp_path, content, match):
    path = tmp_path / "config.json"
    path.write_text(content)
    with pytest.raises(UsageError, match=match):
        read_config(str(path))
    with pytest.raises(UsageError, match="no file"):
        read_config(str(tmp_path / "missing.json"))


def test_nested_text_config_of_a_multimodal_model():
    inner = json.loads((CONFIGS / "qwen2.5-7b.json").read_text())
    spec = spec_from_config({"model_type": "qwen2_5_vl", "text_config": inner}, "vl")
    assert spec.total_params / 1e9 == pytest.approx(7.61, rel=0.02)


def test_params_and_active_params_describe_a_moe_and_fp8_holds_every_weight():
    """Issue 27: --params 671B --active-params 37B in FP8 needs at least 671 GB of weights."""
    e = estimate(671e9, "inference", precision="fp8", active_params=37e9)
    assert e.breakdown["weights"] >= 671 and e.memory_gb >= 671
    assert e.is_moe and e.active_params == 37e9 and e.experts_per_token == 8
    assert any("an MoE of 671.0B parameters, 37.0B active" in a for a in e.assumed)
    H800 = get_model("H800-80GB")
    moe = estimate(671e9, "pretrain", tokens=1e12, gpu=H800, active_params=37e9, experts_per_token=8)
    dense_37b = estimate(37e9, "pretrain", tokens=1e12, gpu=H800)
    assert "MoE granularity" in (moe.mfu_source or "") and moe.mfu < dense_37b.mfu
    with pytest.raises(UsageError, match="active"):
        estimate(7e9, "inference", experts=8)  # experts without --active-params
    with pytest.raises(UsageError):
        estimate(7e9, "inference", active_params=8e9)  # more active than total
    with pytest.raises(UsageError, match="knows its active"):
        estimate(model="qwen2.5-7b", task="inference", active_params=1e9)


def test_config_and_moe_options_on_the_command_line(run_cli, tmp_path):
    config = tmp_path / "config.json"
    config.write_text((CONFIGS / "qwen3-30b-a3b.json").read_text())
    out = run_cli(
        "estimate", "--model", str(config), "--task", "inference", "--gpu", "A100-80GB", "--format", "json"
    )
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["active_params"] / 1e9 == pytest.approx(3.3, rel=0.03) and doc["experts"] == 128
    moe = run_cli("estimate", "--params", "671B", "--active-params", "37B", "--task", "inference",
                  "--precision", "fp8", "--format", "json")  # fmt: skip
    assert json.loads(moe.stdout)["breakdown"]["weights"] >= 671
    bad = run_cli("estimate", "--model", str(tmp_path / "nope.json"), "--task", "inference")
    assert bad.exit_code == 2 and "no file" in bad.output and "Traceback" not in bad.output
