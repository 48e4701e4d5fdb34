"""How long a fine-tuning step spends in collectives, over the links a rental has: NVLink (or PCIe)
inside a machine, the provider's network between machines. A step takes the longer of its compute
and its communication (FSDP and DeepSpeed ZeRO-3 prefetch the next layer's weights while this one
computes, so the two overlap; issue 27: a 70B full fine-tune across two machines came out about ten
times too fast when communication was ignored).

Per micro-step (``batch`` sequences of ``seq_len`` tokens on every GPU), each GPU moves:

- ZeRO-3 / FSDP, full training: the weights gathered for the forward and again for the backward pass,
  and the gradients reduce-scattered: 3 × the 16-bit weights (Rajbhandari et al. 2020, ZeRO §7: 1.5× a
  data-parallel all-reduce, which moves 2×).
- ZeRO 0-2, full training: one all-reduce of the gradients, 2 × the 16-bit weights (no gradient
  accumulation assumed: with it, divide by the accumulation steps).
- LoRA / QLoRA whose frozen weights must be sharded (no single GPU holds the job) at ZeRO-3: the frozen
  weights gathered twice (forward, backward), at their stored width (2 bytes, QLoRA ½ byte); the
  adapters' gradients are too small to count. When one GPU holds the job, or below ZeRO-3, every GPU
  keeps a whole copy (data parallel, what LLaMA-Factory and PEFT do) and only the adapters' gradients move.

A ring over k GPUs sends (k - 1)/k of that through each GPU's link; between m machines each machine's
network carries (m - 1)/m of it (hierarchical collectives, as NCCL runs them). Pretraining is not
modelled here: its calibrated utilisation (docs/calibration.md) comes from runs on RDMA clusters with
tensor and pipeline parallelism, whose communication is in the figure.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog import GpuModel

GPUS_PER_MACHINE = 8  # a cloud GPU machine: 8 GPUs (the instances that span one, and AutoDL's hosts)
# Between machines: an ordinary cloud VPC network without RDMA, 25 Gbit/s per machine (assumption: GPU VM
# instances list a few tens of Gbit/s; a provider's RDMA cluster of 8 × 200-400 Gbit/s is 60-130× more:
# give it with --network-gbps).
DEFAULT_NETWORK_GBPS = 25.0  # Gbit/s per machine
# Inside a machine without NVLink: PCIe 4.0 x16 moves 32 GB/s each way; collectives reach about half
# (assumption; GeForce cards have no peer-to-peer, so copies go through host memory).
PCIE_GB_S = 16.0
# ZeRO (Rajbhandari et al. 2020 §7): per step, stage 3 moves 3× the 16-bit weights, stages 0-2 2×.
ZERO3_WEIGHT_PASSES = 3
ALLREDUCE_WEIGHT_PASSES = 2
FROZEN_WEIGHT_PASSES = 2  # LoRA at ZeRO-3: gather for the forward and for the backward pass
STORED_BYTES = {"lora": 2.0, "qlora": 0.5}  # frozen weights: bf16, or 4-bit NF4


@dataclass(frozen=True)
class StepTime:
    """One micro-step on every GPU: seconds of compute and of collectives, and over what."""

    compute_s: float
    comm_s: float
    link: str  # "NVLink 300 GB/s + 25 Gbit/s network", say

    @property
    def slowdown(self) -> float:
        """How much longer the step is than its compute: 1 when communication hides behind it."""
        return max(1.0, self.comm_s / self.compute_s) if self.compute_s > 0 else 1.0


def bytes_moved(task: str, params: float, zero_stage: int, sharded: bool = True) -> float:
    """Bytes each GPU's collectives move per micro-step, before the ring's (k - 1)/k. ``sharded``: the
    job needs more than one GPU's memory, so an adapter job's frozen weights are split too."""
    if task in STORED_BYTES:
        return FROZEN_WEIGHT_PASSES * params * STORED_BYTES[task] if zero_stage == 3 and sharded else 0.0
    passes = ZERO3_WEIGHT_PASSES if zero_stage == 3 else ALLREDUCE_WEIGHT_PASSES
    return passes * params * 2.0


def machine_link_gb_s(gpu: GpuModel, gpus_on_machine: int) -> tuple[float, str]:
    """(GB/s each way per GPU, words) inside one machine: NVLink where the card has it (a bridge joins
    pairs only), else PCIe."""
    bridge = "bridge" in (gpu.interconnect or "").lower() or gpu.family.upper().startswith("RTX")
    if gpu.nvlink_gbps_bidir and not (bridge and gpus_on_machine > 2):
        return gpu.nvlink_gbps_bidir / 2, f"NVLink {gpu.nvlink_gbps_bidir / 2:g} GB/s each way"
    return PCIE_GB_S, f"PCIe ~{PCIE_GB_S:g} GB/s"


def step_time(
    task: str,
    params: float,
    zero_stage: int,
    flops_per_token: float,
    tokens_per_step: float,
    peak_tflops: float,
    mfu: float,
    gpu: GpuModel,
    gpus: int,
    gpus_per_machine: int | None = None,
    network_gbps: float | None = None,
    sharded: bool = True,
) -> StepTime:
    """Compute and communication of one micro-step of ``tokens_per_step`` tokens on each of ``gpus``
    GPUs, ``gpus_per_machine`` to a machine (default: up to GPUS_PER_MACHINE)."""
    compute = flops_per_token * tokens_per_step / (peak_tflops * 1e12 * mfu)
    per_machine = min(gpus, gpus_per_machine or GPUS_PER_MACHINE)
    machines = math.ceil(gpus / per_machine)
    moved = bytes_moved(task, params, zero_stage, sharded) if gpus > 1 else 0.0
    inside_gb_s, inside = machine_link_gb_s(gpu, per_machine)
    comm = moved * (per_machine - 1) / per_machine / (inside_gb_s * 1e9) if per_machine > 1 else 0.0
    link = inside if per_machine > 1 else ""
    if machines > 1:
        network = network_gbps or DEFAULT_NETWORK_GBPS
        across = moved * (machines - 1) / machines / (network / 8 * 1e9)
        comm = max(comm, across)
        link = (link + " + " if link else "") + f"{network:g} Gbit/s network between {machines} machines"
    return StepTime(compute, comm, link)
