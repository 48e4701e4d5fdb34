"""Writing a file whole or not at all: the one recipe the reports, their chart, the export and the
history chart use (here, since ``reports`` never imports ``planner`` and ``planner`` may import it).

No write follows a link planted beside the target: the temporary file is created new, without
following links (``O_EXCL | O_NOFOLLOW``; one left by a killed run is removed first, and removing a
link never touches what it points to), and renaming onto the target replaces a link there rather
than writing through it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


@contextmanager
def written_whole(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` to write to; renamed onto ``path`` when the block ends without
    an error, removed in every case. Readers never see half a file, and a failure leaves the old one.

    The temporary file exists, empty and regular, when the block starts: open it for writing."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()  # left by a killed run with our pid, or planted: never written through
    os.close(os.open(tmp, NEW_FILE_FLAGS, 0o666))
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def is_special(path: Path) -> bool:
    """True when ``path`` exists and is not a regular file (a FIFO, a device, ``/dev/stdout``): such a
    target is written in place, never renamed over (that would put a regular file in its stead)."""
    try:
        mode = os.stat(path).st_mode  # follows links: /dev/stdout is a link to the terminal or pipe
    except OSError:
        return False
    return not stat.S_ISREG(mode)
