"""A library error names a quantity (``deadline_hours``); the command line names the flag the user typed.

The library words what it says about a caller's values as :class:`~planner.wording.Phrase` s. The CLI
runs every command's library error through :func:`as_typed`, and every note it prints through
:func:`~planner.views.typed.typed` (which lives with the views that print notes): a quantity the command
(or ``planner`` itself, for ``--db``) has a flag for is worded with that flag (``--deadline-hours``); one
it has no flag for (the GPUs a deadline needs, in ``plan``) keeps its plain name, so no answer names a
flag that was never given.
"""

from __future__ import annotations

import click

from planner.errors import PlannerError
from planner.views.typed import namer
from planner.wording import worded


def as_typed(err: PlannerError, *commands: click.Command | None) -> PlannerError:
    """``err`` worded with the flags of ``commands`` (the command run, then its group) where it names
    quantities they have flags for; ``err`` itself when nothing changes."""
    name_of = namer(commands)
    message, hint = worded(err.message, name_of), worded(err.hint, name_of)
    if (message, hint) == (err.message, err.hint):
        return err
    typed_err = PlannerError(message or "", hint)
    typed_err.exit_code = err.exit_code
    return typed_err
