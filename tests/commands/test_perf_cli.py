"""What a command's process loads (issue 8): a bad argument is refused before SQLAlchemy is imported,
and a quote loads neither pandas, requests, Alembic, the importer nor matplotlib. Behaviour only, never
timings."""

from __future__ import annotations

import pytest

from tests.helpers.cli import loaded

MISTAKES_AND_HELP = [
    ("quote", "--gpu", "A100", "--hours", "-1"),
    ("quote", "--gpu", "A100", "--hours", "5", "--gpus", "0"),
    ("quote", "--gpu", "A1OO", "--hours", "5"),
    ("quote", "--gpu", "A100", "--hours", "5", "--billing", "weekley"),
    ("quote", "--gpu", "A100", "--hours", "5", "--provider", "aws"),
    ("quote", "--hours", "5"),
    ("--help",),
    ("quote", "--help"),
]


@pytest.mark.parametrize(
    "args",
    # a mistake and the help in the fast group, the rest in the slow one (each is a Python start-up)
    [pytest.param(a, marks=() if i in (0, 6) else pytest.mark.slow) for i, a in enumerate(MISTAKES_AND_HELP)],
)
def test_a_mistake_or_help_is_answered_before_sqlalchemy_is_imported(tmp_path, args):
    code, heavy, output = loaded(tmp_path, *args)
    assert code in (0, 2), output
    assert heavy == [], output
    assert not (tmp_path / "p.db").exists()  # nor is the database touched


def test_a_quote_loads_only_what_it_needs(tmp_path):
    code, heavy, output = loaded(tmp_path, "quote", "--gpu", "A100", "--hours", "500")
    assert code == 0 and "Recommendation:" in output, output  # first run: the snapshot is loaded
    code, heavy, output = loaded(tmp_path, "quote", "--gpu", "A100", "--hours", "500")
    assert code == 0 and "Recommendation:" in output, output
    assert heavy == ["sqlalchemy"], output
