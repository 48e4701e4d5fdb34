"""Aliyun GPU instance families: which GPU each carries and how many, from the type name alone.

The public price file names no GPU, so this provider knowledge lives here (providers.md §2.3: the
official family documentation, English, as of 2024-2026; [I] marks an inference there). A count that the
rules cannot derive is ``None``: the scraper then skips the type and reports it, it never guesses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One GPU family: the GPU in Aliyun's words (as GPUSpec spells it) and GiB per card."""

    gpu_name: str
    gpu_memory_gb: float | None
    plain_is_one: bool = False  # ``ecs.gn8v.4xlarge`` (no variant) carries one GPU [I, family doc]
    vgpu: bool = False  # a slice of a card: the fraction is not derivable from the name
    inferred: bool = False  # the GPU is an inference ([I] in providers.md), not stated by Aliyun


FAMILIES: dict[str, Family] = {
    "gn8v": Family(
        "NVIDIA H20", 96, plain_is_one=True, inferred=True
    ),  # doc gives 96 GB HBM3, no name: H20 is [I]
    "gn8is": Family("NVIDIA L20", 48, plain_is_one=True),
    # RTX 4090 / RTX 5090 families: named only by a third-party label [3P] (providers.md §2.3) and by a
    # tracker reading the official price page on 2026-09-15 (``ecs.gn8t.4xlarge`` "1xRTX 4090 24G, 16 vCPU",
    # ``ecs.gn9t.6xlarge`` "1xRTX 5090 32G, 24 vCPU": price_points_2026_09.json). Aliyun's own family doc
    # was not read, so the GPU is marked inferred; DescribeInstanceTypes (account mode) states it instead.
    # Unverified: that a plain ``gn8t.<size>``/``gn9t.<size>`` is one card (both observed plain types are).
    "gn8t": Family("NVIDIA GeForce RTX 4090", 24, plain_is_one=True, inferred=True),
    "gn9t": Family("NVIDIA GeForce RTX 5090", 32, plain_is_one=True, inferred=True),
    "gn7e": Family("NVIDIA A100", 80),
    "gn7": Family("NVIDIA A100", 40),
    "gn7i": Family("NVIDIA A10", 24),
    "gn7s": Family("NVIDIA A30", 24),
    "gn6i": Family("NVIDIA T4", 16),
    "gn6e": Family("NVIDIA V100", 32),
    "gn6v": Family("NVIDIA V100", 16),
    "gn5": Family("NVIDIA P100", 16, inferred=True),  # [I]
    "gn5i": Family("NVIDIA P4", 8, inferred=True),  # [I]
    "ebmgn7e": Family("NVIDIA A100", 80),
    "ebmgn7ex": Family("NVIDIA A800", 80, inferred=True),  # [I] China-market variant priced like ebmgn7e
    "ebmgn7ix": Family("NVIDIA A10", 24, inferred=True),  # [I] consistent with price
    "ebmgn8v": Family("NVIDIA H20", 96, inferred=True),  # [I]
    "ebmgn6i": Family("NVIDIA T4", 16, inferred=True),  # [I] bare-metal twin of gn6i
    "ebmgn6v": Family("NVIDIA V100", 16, inferred=True),  # [I] bare-metal twin of gn6v
    "sgn7i": Family("NVIDIA A10", None, vgpu=True),
    "vgn7i": Family("NVIDIA A10", None, vgpu=True),
    "vgn6i": Family("NVIDIA T4", None, vgpu=True),
    "sgn6i": Family("NVIDIA T4", None, vgpu=True),
}

# Bare-metal and rule exceptions, per full type: GPU counts from the cloudpilot-ai/priceserver snapshot
# (built with DescribeInstanceTypes, 2024-10-09) and the family doc.
TYPE_GPU_COUNT: dict[str, int] = {
    "ecs.ebmgn7e.32xlarge": 8,
    "ecs.ebmgn7ex.32xlarge": 8,
    "ecs.ebmgn7ix.32xlarge": 8,
    "ecs.ebmgn6i.24xlarge": 4,
    "ecs.ebmgn6v.24xlarge": 8,
    "ecs.gn5-c8g1.14xlarge": 8,  # 54 vCPU: the c/g rule predicts 7 (providers.md §2.3)
}

_TYPE = re.compile(
    r"ecs\.(?P<family>[a-z]+[0-9]+[a-z]*)(?:-(?P<variant>[a-z0-9-]+))?\.(?P<size>[0-9]*x?large)"
)
_GPU_FAMILY = re.compile(r"(?:ebm|s|v)?gn[0-9]")


def family_of(instance_type: str) -> str | None:
    """``ecs.gn7i-c8g1.2xlarge`` → ``gn7i``; None for a name outside the ``ecs.<family>…`` pattern."""
    match = _TYPE.fullmatch(instance_type)
    return match["family"] if match else None


def looks_like_gpu(instance_type: str) -> bool:
    """Whether the type belongs to a GPU family name pattern (gn*, ebmgn*, sgn*, vgn*), known or not."""
    family = family_of(instance_type)
    return bool(family and _GPU_FAMILY.match(family))


def _size_vcpus(size: str) -> int | None:
    if size == "large":
        return 2
    if size.endswith("xlarge"):
        factor = size.removesuffix("xlarge")
        return 4 * (int(factor) if factor else 1)
    return None


def gpu_count_from_name(instance_type: str) -> int | None:
    """GPUs in one instance by the naming rule (providers.md §2.3), or None when the rule cannot tell.

    ``<family>-c<X>g<Y>.<N>xlarge`` → round(4N / X · Y); ``<family>-<K>x.<size>`` → K; a plain
    ``gn8v.4xlarge`` → 1; bare metal and vGPU slices only from :data:`TYPE_GPU_COUNT`.
    """
    if instance_type in TYPE_GPU_COUNT:
        return TYPE_GPU_COUNT[instance_type]
    match = _TYPE.fullmatch(instance_type)
    family = FAMILIES.get(match["family"]) if match else None
    if match is None or family is None or family.vgpu or match["family"].startswith("ebm"):
        return None
    variant = match["variant"]
    if variant is None:
        return 1 if family.plain_is_one else None
    if m := re.fullmatch(r"([0-9]+)x", variant):
        return int(m[1])
    if (m := re.fullmatch(r"c([0-9]+)g([0-9]+)", variant)) and (vcpus := _size_vcpus(match["size"])):
        ratio = vcpus / int(m[1]) * int(m[2])
        if ratio >= 0.75 and abs(ratio - round(ratio)) <= 0.25:
            return round(ratio)
    return None
