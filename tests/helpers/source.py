"""The project's Python source, parsed once per test session for the guard tests that scan it.

Six guard tests (imports, SQL, shells, eval and pickle, flags in messages, bare statuses, TLS) read
every module of the project; each used to parse and walk every file again (about 0.4 s apiece). A
file's nodes are the same for all of them, so they are made once. A source string (a test's own
snippet) is parsed each time.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def _file_nodes(path: Path) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))))


def nodes(source: Path | str | ast.AST) -> tuple[ast.AST, ...]:
    """Every node of a file (read and walked once per session), of a source string or of a tree,
    in ``ast.walk`` order (the module first). Callers only read the nodes."""
    if isinstance(source, Path):
        return _file_nodes(source.resolve())
    return tuple(ast.walk(ast.parse(source) if isinstance(source, str) else source))
