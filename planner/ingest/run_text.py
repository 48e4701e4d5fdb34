"""Text for a refresh's summary and run rows: lists cut short, control characters and secrets removed.

Text that reaches the run row (errors, notes, unknown GPU names) is cleaned of control characters
and capped, so a provider's junk cannot make the database refuse the row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from planner.text import printable
from scrapers.recording import scrub_text

MAX_LISTED = 5  # names listed per summary line before "and N more"
MAX_NAME_CHARS = 80  # a name quoted in a note (an unknown GPU, say) is cut here
MAX_TEXT_CHARS = 4000  # an error or the notes of one run


def by_reason(issues: Sequence[Any]) -> str:
    """ "GPU count unknown from the name: ecs.a, ecs.b and 3 more; ..." from skipped Issues."""
    reasons: dict[str, list[str]] = {}
    for issue in issues:
        itype, message = issue.instance_type, issue.message
        if itype and itype in message:
            message = message.split(itype, 1)[1].lstrip(" :") or message
        names = reasons.setdefault(message, [])
        if itype and itype not in names:
            names.append(itype)
    return "; ".join(
        f"{reason} ({listed(names, ', ')})" if names else reason for reason, names in reasons.items()
    )


def listed(items: Sequence[str], sep: str = "; ") -> str:
    shown = sep.join(items[:MAX_LISTED])
    return shown + (f"; and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else "")


def clean(text: str, limit: int, keep_lines: bool = False) -> str:
    """``text`` without control or invisible characters (NUL is refused by PostgreSQL; C1 and bidi
    characters rewrite a terminal: see ``planner.text``), cut to ``limit`` characters."""
    text = printable(str(text), keep_lines=keep_lines)
    if keep_lines:
        text = text.replace("\t", " ")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """``text`` with each of ``secrets`` replaced by ``***`` (pass ``secret_forms``: every form sent)."""
    return scrub_text(text, tuple(s for s in secrets if s))
