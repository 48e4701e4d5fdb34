"""Sample raw offers, as a scraper hands them to normalisation."""

from __future__ import annotations

from decimal import Decimal

from scrapers.base import RawOffer

T4 = RawOffer(
    provider="tencent",
    region="ap-beijing",
    instance_type="GN7.2XLARGE32",
    gpu_name="NVIDIA T4",
    gpu_count=1.0,
    billing="on_demand",
    price=Decimal("8.68"),
    unit="hour",
    zone="ap-beijing-5",
    source="s",
)
