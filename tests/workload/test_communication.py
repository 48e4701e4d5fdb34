"""Fine-tuning across GPUs waits for its collectives (issue 27: a 70B full fine-tune across two
machines came out about ten times too fast). A step takes the longer of compute and communication."""

from __future__ import annotations

import json

import pytest

from planner.catalog import get_model
from planner.errors import UsageError
from planner.workload.communication import DEFAULT_NETWORK_GBPS, bytes_moved, step_time
from planner.workload.estimate import estimate

A100 = get_model("A100-80GB")
RTX4090 = get_model("RTX4090-24GB")


def test_bytes_moved_follow_zero():
    n = 70e9
    assert bytes_moved("full", n, 3) == 3 * 2 * n  # gather forward, gather backward, reduce-scatter
    assert bytes_moved("full", n, 2) == 2 * 2 * n  # one all-reduce of the gradients
    assert bytes_moved("lora", n, 3) == 2 * 2 * n  # frozen bf16 weights gathered twice
    assert bytes_moved("qlora", n, 3) == 2 * 0.5 * n  # 4-bit weights
    assert bytes_moved("lora", n, 2) == 0.0  # replicated frozen weights: only the adapters move
    assert bytes_moved("lora", n, 3, sharded=False) == 0.0  # one GPU holds it: data-parallel copies


def test_70b_full_fine_tune_across_two_machines_is_communication_bound():
    one = estimate(model="llama-3-70b", task="full", tokens=1e8, gpu=A100, gpus=16, gpus_per_machine=16)
    two = estimate(model="llama-3-70b", task="full", tokens=1e8, gpu=A100, gpus=16)  # 2 machines of 8
    assert one.bound == "compute" and one.comm_slowdown == 1.0
    assert two.bound == "communication" and two.comm_slowdown > 5
    assert two.gpu_hours == pytest.approx(one.gpu_hours * two.comm_slowdown)
    assert f"{DEFAULT_NETWORK_GBPS:g} Gbit/s network between 2 machines" in (two.link or "")
    assert any("communication-bound" in n for n in two.notes)
    rdma = estimate(model="llama-3-70b", task="full", tokens=1e8, gpu=A100, gpus=16, network_gbps=1600)
    assert rdma.bound == "compute" and rdma.gpu_hours == pytest.approx(one.gpu_hours)


def test_one_gpu_and_pretraining_have_no_communication_term():
    single = estimate(model="qwen2.5-7b", task="lora", tokens=1e8, gpu=A100)
    assert single.link is None and single.bound == "compute"
    pre = estimate(model="llama-2-70b", task="pretrain", tokens=1e9, gpu=A100, gpus=64)
    assert pre.link is None  # its calibrated utilisation holds its cluster's communication


def test_geforce_cards_talk_over_pcie():
    step = step_time("full", 7.6e9, 3, 6 * 7.6e9, 2048, 165.2, 0.42, RTX4090, 8)
    assert "PCIe" in step.link and step.slowdown > 1
    e = estimate(model="qwen2.5-7b", task="full", tokens=1e8, gpu=RTX4090, gpus=8)
    assert e.bound == "communication" and e.gpu_hours == pytest.approx(e.gpus * e.wall_hours)
    # A 7B LoRA that one 4090 holds runs as data-parallel copies: nothing but the adapters moves.
    assert estimate(model="qwen2.5-7b", task="lora", tokens=1e8, gpu=RTX4090, gpus=4).bound == "compute"


def test_network_speed_is_checked():
    with pytest.raises(UsageError, match="network gbps"):
        estimate(model="qwen2.5-7b", task="lora", tokens=1e8, gpu=A100, gpus=16, network_gbps=1e9)


def test_network_option_on_the_command_line(run_cli):
    args = ("estimate", "--model", "llama-3-70b", "--task", "full", "--tokens", "100M", "--gpu", "A100-80GB",
            "--gpus", "16", "--format", "json")  # fmt: skip
    slow = json.loads(run_cli(*args).stdout)
    fast = json.loads(run_cli(*args, "--network-gbps", "1600").stdout)
    assert slow["bound"] == "communication" and fast["bound"] == "compute"
    assert slow["gpu_hours"] > 5 * fast["gpu_hours"]
    text = run_cli(*args[:-2]).stdout
    assert "Links             NVLink 300 GB/s each way + 25 Gbit/s network between 2 machines" in text
    assert "--network-gbps" in text
