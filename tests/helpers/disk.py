"""A tiny disk to fill up, and a big CSV to fill it with."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def tiny_disk(path: Path, size: str = "2m") -> Iterator[Path | None]:
    """A tmpfs of ``size`` at ``path`` (None when this machine does not let us mount one)."""
    path.mkdir()
    try:
        subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
            check=True,
            capture_output=True,
        )
        mounted = True
    except (OSError, subprocess.CalledProcessError):
        mounted = False
    if not mounted:
        yield None
        return
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True)


def fill(folder: Path, leave_bytes: int) -> Path:
    """Fill the file system of ``folder`` until ``leave_bytes`` are free."""
    stats = os.statvfs(folder)
    free = stats.f_bavail * stats.f_frsize
    filler = folder / "filler"
    with filler.open("wb") as fh:
        fh.write(b"\0" * max(0, free - leave_bytes))
    return filler


def _big_csv(path: Path, first_day: dt.date, rows: int = 30_000) -> Path:
    """``rows`` observations: 50 instances x 2 billing modes x rows/100 days from ``first_day``."""
    lines = ["provider,region,instance_type,gpu_model,gpu_count,billing,price,currency,observed_at"]
    for d in range(rows // 100):
        day = (first_day + dt.timedelta(days=d)).isoformat()
        for i in range(50):
            lines.append(
                f"tencent,ap-r{i % 5},GT4.X{i},A100-40GB,1,on_demand,{10 + i / 10 + d / 100:.2f},CNY,{day}"
            )
            lines.append(f"tencent,ap-r{i % 5},GT4.X{i},A100-40GB,1,monthly,{5000 + i + d},CNY,{day}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
