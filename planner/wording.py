"""Words that name the quantities a caller gave: plain names for a program, flags on the command line.

The library does not know how a value reached it: a program passes ``lora_rank=64``, a person types
``--lora-rank 64``. So a message, hint or note that names a quantity is a :class:`Phrase`, a template
whose fields not given as values are quantity names (``"{lora_rank} applies to {task} lora or qlora"``).
It *is* the plain wording ("lora rank applies to task lora or qlora"), a ``str`` like any other; the
command line words it again with the flags its command has (``planner.commands.flags``), and any
quantity it has no flag for keeps its plain name, so no answer names a flag that was never given.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from typing import Any

# Plain names that are not the quantity's Python name with spaces for underscores.
_PLAIN_NAMES = {"db": "database URL", "config": "config file", "out": "output folder"}


def plain_name(quantity: str) -> str:
    """How the library names a quantity: ``lora_rank`` → ``lora rank``."""
    return _PLAIN_NAMES.get(quantity, quantity.replace("_", " "))


class _Names(dict[str, Any]):
    """The values given, and the quantity names worded by ``name_of`` for every other field."""

    def __init__(self, values: Mapping[str, Any], name_of: Callable[[str], str]):
        super().__init__(values)
        self.name_of = name_of

    def __missing__(self, key: str) -> str:
        return self.name_of(key)


class Phrase(str):
    """Text naming quantities; its value as a ``str`` is the plain wording.

    ``Phrase("give {model} or {params}, not both")`` reads "give model or params, not both";
    ``.worded(flag)`` gives the same sentence with each quantity named by ``flag(quantity)``. Values go
    in as keyword arguments (``Phrase("{seq_len} {n} is too long", n=9000)``), so text from a user is
    never read as a template.
    """

    template: str
    values: Mapping[str, Any]

    def __new__(cls, template: str, **values: Any) -> Phrase:
        phrase = super().__new__(cls, template.format_map(_Names(values, plain_name)))
        phrase.template = template
        phrase.values = values
        return phrase

    def __reduce__(self) -> tuple[Any, ...]:  # a copy (dataclasses.asdict deep-copies) keeps the template
        return (_phrase, (self.template, dict(self.values)))

    @property
    def quantities(self) -> tuple[str, ...]:
        """The quantities named, in order, each once."""
        fields = (field for _, field, _, _ in string.Formatter().parse(self.template) if field)
        return tuple(dict.fromkeys(f for f in fields if f not in self.values))

    def worded(self, name_of: Callable[[str], str]) -> str:
        """The text with each quantity named by ``name_of`` (a flag, or :func:`plain_name`)."""
        return self.template.format_map(_Names(self.values, name_of))


def _phrase(template: str, values: dict[str, Any]) -> Phrase:
    return Phrase(template, **values)


def worded(text: str | None, name_of: Callable[[str], str]) -> str | None:
    """``text`` with its quantities named by ``name_of`` when it is a :class:`Phrase`; else itself."""
    return text.worded(name_of) if isinstance(text, Phrase) else text
