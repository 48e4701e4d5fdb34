"""Text from outside (files, providers, the command line) made safe to store and to print.

Two kinds of characters never belong in a name, a source note or a line on a terminal:

- control characters: C0 (NUL, tab, newline, ESC...), DEL and C1 (U+0080-U+009F, where U+009B is a
  terminal's CSI and U+009D its OSC: a name carrying them can rewrite the screen);
- invisible format characters: bidi overrides and isolates (U+202A-U+202E, U+2066-U+2069, which can show
  a name backwards), zero-width characters (U+200B-U+200F, U+2060-U+2064, U+FEFF), the soft hyphen, and
  the line and paragraph separators U+2028/U+2029 (a new line to a terminal, a log or JavaScript).
  ``RTX 4090\u200b`` looks like ``RTX 4090`` and would be stored as another instance.
"""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # keeps tab and newline
_UNPRINTABLE = re.compile(f"{CONTROL.pattern}|{INVISIBLE.pattern}")


def without_invisible(text: str) -> str:
    """``text`` without the invisible format characters (what a name is made of, on the way in)."""
    return INVISIBLE.sub("", text)


def printable(text: str, keep_lines: bool = False) -> str:
    """``text`` for a terminal, a table or a log: control characters become spaces, invisible ones go.
    With ``keep_lines`` tabs and newlines stay (JSON and CSV quote them; a multi-line note keeps its
    lines)."""
    if _UNPRINTABLE.search(text) is None:  # the usual case, one scan
        return text
    control = _CONTROL_BUT_LINES if keep_lines else CONTROL
    return control.sub(" ", INVISIBLE.sub("", text))


def first_line(err: Exception) -> str:
    """The first line of an error (a database driver's own, under SQLAlchemy's wrapper), or its type's
    name when it says nothing."""
    text = str(getattr(err, "orig", None) or err).strip()
    return text.splitlines()[0] if text else type(err).__name__
