"""The errors a user can cause or fix. The CLI prints them as one line (plus a hint), never a traceback.

A message or hint that names a quantity the caller gave is a :class:`~planner.wording.Phrase`: plain
names for a program, the flags typed on the command line.
"""

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
