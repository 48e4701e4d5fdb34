"""Creating a folder the user named (``report --out``, the folder of ``--db sqlite:///...``): only with
one line saying so, the same way everywhere, so a typo does not silently grow a tree of folders. The
tool's own data folder (the default database's) is created quietly: nobody typed it."""

from __future__ import annotations

import errno
from collections.abc import Callable
from pathlib import Path


def ensure_folder(path: Path, what: str, say: Callable[[str], None] | None = None) -> Path:
    """``path``, created with its parents if missing; ``say`` then gets "Created the folder PATH for WHAT."
    An OSError (no permission, a file in the way) propagates for the caller to word."""
    path = Path(path).expanduser()
    if path.exists() and not path.is_dir():  # /dev/null, a file: not "File exists" but what is wrong
        raise NotADirectoryError(errno.ENOTDIR, "it is not a folder", str(path))
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        if say is not None:
            say(f"Created the folder {path} for {what}.")
    return path
