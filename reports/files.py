"""Writing a file whole or not at all: the one recipe the reports, their chart, the export and the
history chart use (here, since ``reports`` never imports ``planner`` and ``planner`` may import it)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def written_whole(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed onto ``path`` when the block ends without
    an error, removed in every case. Readers never see half a file, and a failure leaves the old one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
