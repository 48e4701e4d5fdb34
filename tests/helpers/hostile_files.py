"""Ways to break one recorded answer file: a link to a secret or /dev/zero, a FIFO, an oversized file."""

from __future__ import annotations

import os
from pathlib import Path

from scrapers.recording import MAX_RESPONSE_BYTES

LOCAL_SECRET = "LOCAL-FILE-CONTENT-never-shown-7Qz"


def _link_to_local_file(body: Path, tmp_path: Path) -> None:
    secret = tmp_path / "private.txt"
    secret.write_text(LOCAL_SECRET + "\n", encoding="utf-8")
    body.unlink()
    body.symlink_to(secret)


def _link_to_dev_zero(body: Path, tmp_path: Path) -> None:
    body.unlink()
    body.symlink_to("/dev/zero")


def _fifo(body: Path, tmp_path: Path) -> None:
    body.unlink()
    os.mkfifo(body)  # nobody ever writes to it: opening or reading it must not hang the replay


def _oversized(body: Path, tmp_path: Path) -> None:
    with open(body, "r+b") as fh:
        fh.truncate(MAX_RESPONSE_BYTES + 1)  # sparse: costs no disk, and must not be read into memory
