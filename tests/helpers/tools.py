"""Outside programs some tests need (Chromium and its driver, LibreOffice): a test skips with the
install line when one is missing, so plain ``pytest`` passes on any machine, unless
``PLANNER_TEST_REQUIRE_TOOLS`` is set (``.ci/run`` sets it after installing them): then a missing
program fails the test, so CI can never pass by skipping the browser or the spreadsheet."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

REQUIRE_ENV = "PLANNER_TEST_REQUIRE_TOOLS"


def required() -> bool:
    return bool(os.environ.get(REQUIRE_ENV))


def missing(reason: str) -> NoReturn:
    """Skip (the whole module, when called at import) with ``reason``, or fail where CI requires it."""
    if required():
        pytest.fail(f"{reason}; {REQUIRE_ENV} is set, so this fails instead of skipping", pytrace=False)
    pytest.skip(reason, allow_module_level=True)
