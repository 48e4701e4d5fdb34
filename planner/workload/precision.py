"""Which precisions each GPU runs, and the nearest one it has when asked for one it lacks.

Keyed by GPU family (``GpuModel.family``), kept here rather than in ``data/gpus.csv``. Tensor-core
formats by generation (NVIDIA architecture whitepapers: Volta 2017, Turing 2018, Ampere GA100/GA102
2020, Ada 2022, Hopper 2022, Blackwell 2024):

- FP16: every GPU in the catalogue (Pascal P100 natively; P40/P4 slowly, which their dense TFLOPS show).
- BF16: Ampere and later (A100/A800, A10, A30, RTX A-series, RTX 30xx, and every newer card). Volta,
  Turing and Pascal (V100, T4, RTX 2080 Ti, P100, P40, P4) have none: they run FP16.
- FP8 (E4M3/E5M2): Hopper (H100, H800, H20, H200), Ada (L40S, L40, L20, L4, RTX 40xx, RTX 6000 Ada)
  and Blackwell (B200, RTX 50xx, RTX PRO 6000). Ampere, Volta, Turing and Pascal have none.
- INT8 and INT4 are weight formats (GPTQ, AWQ, bitsandbytes): the weights are stored in 8 or 4 bits
  and dequantised to 16-bit for the matrix multiply, so every GPU runs them at its 16-bit peak.

A plan never runs a precision its GPU lacks (issue 27): a default the GPU lacks (BF16 on a V100) is
replaced by the nearest it has, and says so; a precision asked for explicitly is refused with that
nearest one named (``PrecisionError``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner.errors import UsageError
from planner.wording import Phrase

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog import GpuModel

# Families without BF16 (pre-Ampere). Must agree with gpus.csv's has_bf16 (a test checks).
NO_BF16_FAMILIES = frozenset({"V100", "T4", "P100", "P40", "P4", "RTX2080TI"})
# Families with FP8 tensor cores: Hopper, Ada, Blackwell.
FP8_FAMILIES = frozenset(
    {"H100", "H800", "H20", "H200", "B200", "L40S", "L40", "L20", "L4", "RTX4090", "RTX4090D",
     "RTX6000ADA", "RTX5090", "RTX5090D", "RTXPRO6000", "RTXPRO6000D"}
)  # fmt: skip
WEIGHT_FORMATS = ("int8", "int4")  # stored low, computed in 16-bit: every GPU


class PrecisionError(UsageError):
    """A precision asked of a GPU that does not have it (the hint names the nearest it has)."""


def _family(gpu: GpuModel) -> str:
    return gpu.family.upper().replace(" ", "")


def has_fp8(gpu: GpuModel) -> bool:
    """Whether the GPU has FP8 tensor cores (Hopper, Ada, Blackwell)."""
    return _family(gpu) in FP8_FAMILIES


def has_bf16(gpu: GpuModel) -> bool:
    """Whether the GPU has BF16 (Ampere and later)."""
    return _family(gpu) not in NO_BF16_FAMILIES


def precisions_of(gpu: GpuModel) -> tuple[str, ...]:
    """Every precision ``gpu`` runs: fp32, fp16, bf16 (Ampere on), fp8 (Hopper, Ada, Blackwell), and
    the int8/int4 weight formats."""
    out = ["fp32", "fp16"]
    if has_bf16(gpu):
        out.append("bf16")
    if has_fp8(gpu):
        out.append("fp8")
    return (*out, *WEIGHT_FORMATS)


def has_precision(gpu: GpuModel, precision: str) -> bool:
    return precision in precisions_of(gpu)


def nearest_precision(gpu: GpuModel, precision: str, task: str) -> str:
    """The precision ``gpu`` has that is closest to ``precision``: BF16 → FP16 (same bytes); FP8 → INT8
    weights for inference (same bytes, 16-bit compute), else BF16 (FP16 where there is no BF16)."""
    if has_precision(gpu, precision):
        return precision
    sixteen = "bf16" if has_bf16(gpu) else "fp16"
    if precision == "fp8":
        return "int8" if task == "inference" else sixteen
    return sixteen


def refuse(gpu: GpuModel, precision: str, task: str) -> PrecisionError:
    """The one-line refusal of ``precision`` on ``gpu``, naming what it has and the nearest."""
    near = nearest_precision(gpu, precision, task)
    what = "FP8 tensor cores" if precision == "fp8" else precision.upper()
    same = " (the same memory: 8-bit weights, 16-bit compute)" if near == "int8" else ""
    where = (
        "FP8 runs on Hopper (H100, H800, H20, H200), Ada (L40S, L20, L4, RTX 40xx) and Blackwell"
        if precision == "fp8"
        else "BF16 runs on Ampere (A100, A10, RTX 30xx) and later"
    )
    return PrecisionError(
        f"{gpu.name} has no {what}",
        Phrase("use {precision} {near}" + same + "; " + where, near=near),
    )
