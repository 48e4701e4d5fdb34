"""A library error names a quantity (``deadline_hours``); the command line names the flag the user typed.

The library words what it says about a caller's values as :class:`~planner.wording.Phrase` s. The CLI
runs every command's library error through :func:`as_typed`, and every note it prints through
:func:`typed`: a quantity the command (or ``planner`` itself, for ``--db``) has a flag for is worded with
that flag (``--deadline-hours``); one it has no flag for (the GPUs a deadline needs, in ``plan``) keeps
its plain name, so no answer names a flag that was never given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from planner.errors import PlannerError
from planner.wording import Phrase, plain_name, worded


def flag_for(command: click.Command | None, quantity: str) -> str | None:
    """The option of ``command`` spelled like ``quantity`` (``gpus_max`` → ``--gpus-max``), if any."""
    if command is None:
        return None
    wanted = "--" + quantity.replace("_", "-")
    for param in command.params:
        if isinstance(param, click.Option) and wanted in param.opts:
            return wanted
    return None


def namer(commands: Sequence[click.Command | None]) -> Callable[[str], str]:
    """Names a quantity by the first flag of ``commands`` spelled like it, else by its plain name."""

    def name_of(quantity: str) -> str:
        for command in commands:
            if flag := flag_for(command, quantity):
                return flag
        return plain_name(quantity)

    return name_of


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


def typed(text: str) -> str:
    """A library note worded with the flags of the command being run (plain names outside one)."""
    if not isinstance(text, Phrase):
        return text
    ctx = click.get_current_context(silent=True)
    chain = []
    while ctx is not None:
        chain.append(ctx.command)
        ctx = ctx.parent
    return text.worded(namer(chain))


def typed_tree(value: Any) -> Any:
    """``value`` (a JSON record or CSV row) with every :class:`Phrase` in it worded by :func:`typed`."""
    if isinstance(value, Phrase):
        return typed(value)
    if isinstance(value, dict):
        return {k: typed_tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed_tree(v) for v in value]
    if isinstance(value, tuple):
        return tuple(typed_tree(v) for v in value)
    return value
