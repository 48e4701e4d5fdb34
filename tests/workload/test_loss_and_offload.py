"""Fine-tuning memory options (issue 27): how the loss is computed, pure-bf16 training, ZeRO-Offload."""

from __future__ import annotations

import pytest

from planner.errors import UsageError
from planner.workload.estimate import estimate
from planner.workload.memory import LOSS_BYTES


def test_the_loss_sets_the_logits_memory_at_long_context():
    """Llama 3.1 8B (128K vocabulary) LoRA at 32K context: the plain loss dominates; fused removes it."""
    kw = dict(model="llama-3.1-8b", task="lora", seq_len=32768)
    plain, chunked, fused = (estimate(**kw, loss=loss) for loss in ("plain", "chunked", "fused"))
    assert estimate(**kw).loss == "plain"  # what Hugging Face's Trainer does
    logits_gb = 128_256 * 32768 / 1e9
    assert plain.breakdown["activations"] - fused.breakdown["activations"] == pytest.approx(14 * logits_gb)
    assert chunked.breakdown["activations"] - fused.breakdown["activations"] == pytest.approx(4 * logits_gb)
    assert fused.memory_gb < chunked.memory_gb < plain.memory_gb
    assert plain.breakdown["activations"] > plain.breakdown["weights"]  # the loss dominates
    assert LOSS_BYTES == {"plain": 14.0, "chunked": 4.0, "fused": 0.0}
    with pytest.raises(UsageError):
        estimate(model="llama-3.1-8b", task="inference", loss="fused")


def test_pure_bf16_full_training_holds_8_bytes_a_parameter():
    mixed = estimate(7e9, "full")
    pure = estimate(7e9, "full", pure_bf16=True)
    states = ("weights", "gradients", "optimizer_states")
    assert sum(mixed.breakdown[k] for k in states) == pytest.approx(7 * 16)
    assert sum(pure.breakdown[k] for k in states) == pytest.approx(7 * 8)
    with pytest.raises(UsageError):
        estimate(7e9, "lora", pure_bf16=True)


def test_zero_offload_keeps_only_the_16_bit_weights_on_the_gpu():
    e = estimate(13e9, "full", cpu_offload=True)
    assert e.breakdown["gradients"] == 0 and e.breakdown["optimizer_states"] == 0
    assert e.breakdown["weights"] == pytest.approx(26) and e.cpu_offload_gb == pytest.approx(13 * 14)


def test_loss_and_pure_bf16_on_the_command_line(run_cli):
    args = ("estimate", "--model", "llama-3.1-8b", "--task", "lora", "--seq-len", "32768")
    assert "plain loss" in run_cli(*args, "--explain").stdout
    assert "fused loss" in run_cli(*args, "--loss", "fused", "--explain").stdout
    bad = run_cli(*args, "--pure-bf16")
    assert bad.exit_code == 2 and "--pure-bf16" in bad.output and "Traceback" not in bad.output
