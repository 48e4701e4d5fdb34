"""A library error names a quantity (``deadline_hours``); the command line names the flag the user typed.

The CLI runs every command's library error through :func:`as_typed`: a :class:`QuantityError` about a
quantity the command has a flag for is worded with that flag (``--deadline-hours``); one about a
quantity it has no flag for (the GPUs a deadline needs, in ``plan``) keeps the quantity's plain name, so
no answer names a flag that was never given.
"""

from __future__ import annotations

import click

from planner.errors import PlannerError, QuantityError, UsageError


def flag_for(command: click.Command | None, quantity: str) -> str | None:
    """The option of ``command`` spelled like ``quantity`` (``gpus_max`` → ``--gpus-max``), if any."""
    if command is None:
        return None
    wanted = "--" + quantity.replace("_", "-")
    for param in command.params:
        if isinstance(param, click.Option) and wanted in param.opts:
            return wanted
    return None


def as_typed(err: PlannerError, command: click.Command | None) -> PlannerError:
    """``err`` worded with ``command``'s flag when it is a QuantityError about one of its flags."""
    if not isinstance(err, QuantityError):
        return err
    flag = flag_for(command, err.quantity)
    if flag is None:
        return err
    message, hint = err.worded(flag)
    return UsageError(message, hint)
