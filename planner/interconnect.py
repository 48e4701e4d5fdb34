"""How the GPUs of a rental talk (NVLink inside a machine, the provider's network between machines),
moved out of ``planner.pricing``: ``link_between`` labels it for ``quote`` and ``plan``, and the tie
rule of ``planner.ranking.rank`` prefers one NVLink domain."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner import catalog
from planner.providers import MARKET_MACHINE_GPUS

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog import GpuModel


ACROSS_INSTANCES = " + network"  # GPUs on different machines talk over the provider's network
NETWORK_ONLY = "network only"  # one GPU per instance: nothing but the network joins them
ONE_MACHINE = " (one machine)"  # a marketplace's GPUs, as many as one of its machines holds


def link_between(
    model: GpuModel, gpus_per_instance: int, instances: int, per_gpu_listing: bool = False
) -> tuple[str | None, float | None]:
    """How the GPUs of a rental talk: (label, NVLink GB/s they use), or (None, None) for a single GPU.

    Inside one instance, the model's link (``catalog.interconnect_label``, per GPU model: the instance's
    actual packaging, SXM or PCIe, is not known); across instances, the provider's network too, so
    ``link_between(H800, 8, 2) == ("NVLink (cut) 400 GB/s + network", 400.0)`` and 1-GPU instances give
    ``("network only", None)``. A marketplace's per-GPU listings (``per_gpu_listing``, AutoDL) are GPUs
    of shared machines: up to ``MARKET_MACHINE_GPUS`` of them can be rented on one machine and talk over
    its link, more need the network too.
    """
    gpus = gpus_per_instance * instances
    if gpus <= 1:
        return None, None
    if per_gpu_listing and gpus_per_instance == 1:
        if gpus <= MARKET_MACHINE_GPUS:
            return catalog.interconnect_label(model) + ONE_MACHINE, model.nvlink_gbps_bidir
        return catalog.interconnect_label(model) + ACROSS_INSTANCES, model.nvlink_gbps_bidir
    if gpus_per_instance <= 1:
        return NETWORK_ONLY, None
    label = catalog.interconnect_label(model) + (ACROSS_INSTANCES if instances > 1 else "")
    return label, model.nvlink_gbps_bidir
