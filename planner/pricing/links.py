"""How the GPUs of a rental talk (NVLink inside a machine, the provider's network between machines):
``link_between`` labels it for ``quote`` and ``plan``, and the tie rule of ``planner.pricing.rank.rank``
prefers one NVLink domain."""

from __future__ import annotations

from typing import TYPE_CHECKING

from planner import catalog
from planner.providers import MARKET_MACHINE_GPUS

if TYPE_CHECKING:  # pragma: no cover
    from planner.catalog import GpuModel


ACROSS_INSTANCES = " + network"  # GPUs on different machines talk over the provider's network
NETWORK_ONLY = "network only"  # one GPU per instance: nothing but the network joins them
ONE_MACHINE = " (one machine)"  # a marketplace's GPUs, as many as one of its machines holds


def machine_link(model: GpuModel, gpus_on_machine: int, instance_type: str = "") -> tuple[str, float | None]:
    """How ``gpus_on_machine`` GPUs of one machine talk: (label, NVLink GB/s they share as one domain).

    The model's link (``catalog.interconnect_label``), except where the instance says otherwise or the
    link cannot join them all: an instance named PCIe (AutoDL's ``A100-PCIE-40GB``) has no NVLink, and a
    bridge joins pairs only, so three or more bridged cards are not one NVLink domain.
    """
    if "pcie" in instance_type.casefold():
        return "PCIe only", None
    label = catalog.interconnect_label(model)
    if label.startswith("NVLink bridge") and gpus_on_machine > 2:
        return label + " (pairs) + PCIe", None
    return label, model.nvlink_gbps_bidir


def link_between(
    model: GpuModel,
    gpus_per_instance: int,
    instances: int,
    per_gpu_listing: bool = False,
    instance_type: str = "",
) -> tuple[str | None, float | None]:
    """How the GPUs of a rental talk: (label, NVLink GB/s they use), or (None, None) for a single GPU.

    Inside one instance, ``machine_link`` (the model's link, unless the instance is named PCIe or a
    bridge cannot join them all); across instances, the provider's network too, so
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
            label, gbps = machine_link(model, gpus, instance_type)
            return label + ONE_MACHINE, gbps
        label, gbps = machine_link(model, MARKET_MACHINE_GPUS, instance_type)
        return label + ACROSS_INSTANCES, gbps
    if gpus_per_instance <= 1:
        return NETWORK_ONLY, None
    label, gbps = machine_link(model, gpus_per_instance, instance_type)
    return label + (ACROSS_INSTANCES if instances > 1 else ""), gbps
