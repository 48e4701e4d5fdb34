"""A library note worded with the flags of the command being run: what the views print for people.

The library words what it says about a caller's values as :class:`~planner.wording.Phrase` s. Every
note a view prints goes through :func:`typed`: a quantity the command running (or ``planner`` itself,
for ``--db``) has a flag for is worded with that flag (``--deadline-hours``); one it has no flag for
keeps its plain name, so no answer names a flag that was never given. Outside a command (a program, a
test) a note keeps its plain wording. Errors are worded the same way by
``planner.commands.flags.as_typed``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

from planner.wording import Phrase, plain_name


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
