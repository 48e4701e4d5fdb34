"""The errors a user can cause or fix. The CLI prints them as one line (plus a hint), never a traceback.

A message or hint that names a quantity the caller gave is a :class:`~planner.wording.Phrase`: plain
names for a program, the flags typed on the command line.
"""

import errno

from planner.wording import Phrase


class PlannerError(Exception):
    """A problem the user can act on. ``hint`` says how; ``exit_code`` is what the CLI exits with."""

    exit_code = 1

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint


class UsageError(PlannerError):
    """A bad value on the command line or in a file the user wrote (exit code 2, like click's own)."""

    exit_code = 2


# Where to find the names of a kind when no near name can be suggested.
NAME_LISTS = {"GPU": "`planner gpus` lists every GPU with its aliases"}


class UnknownNameError(UsageError):
    """A name (GPU, provider, billing mode, setting) that is not in our vocabulary; suggests near names."""

    def __init__(self, kind: str, name: str, suggestions: list[str] | tuple[str, ...] = ()):
        hint = f"did you mean {', '.join(suggestions)}?" if suggestions else NAME_LISTS.get(kind)
        super().__init__(f"unknown {kind} {name!r}", hint)
        self.kind = kind
        self.name = name
        self.suggestions = list(suggestions)


class ConfigError(UsageError):
    """The configuration file cannot be read or has a wrong setting."""


# What can be wrong with a path the user named: a fix to the command's words (exit 2). Any other
# errno is the system failing while writing (a full disk, an I/O error): exit 1.
PATH_MISTAKES = frozenset(
    {
        errno.ENOENT,  # the folder does not exist
        errno.ENOTDIR,  # a file where a folder should be
        errno.EISDIR,  # a folder where a file should be
        errno.EEXIST,  # something else already under that name
        errno.ENAMETOOLONG,
        errno.ELOOP,
        errno.EACCES,  # not ours to write
        errno.EPERM,
        errno.EROFS,  # a read-only file system
    }
)


def write_error(message: str, err: OSError, hint: str | Phrase | None = None) -> PlannerError:
    """The error for a file or folder the user named that could not be written: a UsageError (exit 2)
    when the path is wrong for it (``PATH_MISTAKES``), a PlannerError (exit 1) when the system failed."""
    kind = UsageError if err.errno in PATH_MISTAKES else PlannerError
    return kind(message, hint)


class DatabaseError(PlannerError):
    """The database cannot be reached, opened or written."""


class QuantityError(UsageError):
    """A value out of range, named by its quantity (``deadline_hours``), never by a flag: the library
    does not know how a value was given. The command line words it as the flag the user typed
    (``--deadline-hours``) when its command has that flag (``planner.commands.flags``); the message and
    hint are :class:`~planner.wording.Phrase` s naming the quantity."""

    def __init__(self, quantity: str, problem: str, example: str | None = None, hint: str | None = None):
        self.quantity = quantity  # a Python name: hours, gpus_max, deadline_hours
        self.problem = problem  # what is wrong, after the name: "must be at least 1, got 0"
        self.example = example  # a good value, shown as "e.g. NAME EXAMPLE"
        self.plain_hint = hint  # a hint used instead of the example (a Phrase when it names quantities)
        # A quantity with no Python name ("CNY per USD") is no flag's: its words stay as they are.
        name = (
            "{" + quantity + "}"
            if quantity.isidentifier()
            else quantity.replace("{", "{{").replace("}", "}}")
        )
        if hint is None and example:
            hint = Phrase("e.g. " + name + " {example}", example=example)
        super().__init__(Phrase(name + " {problem}", problem=problem), hint)
