"""The billing-mode vocabulary: every spelling people and providers use reaches one canonical mode."""

from __future__ import annotations

import pytest

from planner.billing import BILLING_MODES, canonical_billing
from planner.errors import UnknownNameError


@pytest.mark.parametrize(
    ("name", "mode"),
    [
        ("on_demand", "on_demand"),
        ("On-Demand", "on_demand"),
        ("payg", "on_demand"),
        ("按量", "on_demand"),
        ("按量付费", "on_demand"),
        ("按量计费", "on_demand"),
        ("按需", "on_demand"),
        ("竞价", "spot"),
        ("抢占式实例", "spot"),
        ("包日", "daily"),
        ("包周", "weekly"),
        ("包月", "monthly"),
        ("包年", "yearly"),
        (" MONTHLY ", "monthly"),
    ],
)
def test_every_spelling_reaches_one_mode(name, mode):
    assert canonical_billing(name) == mode


def test_every_canonical_mode_is_its_own_name():
    assert [canonical_billing(m) for m in BILLING_MODES] == list(BILLING_MODES)


def test_unknown_mode_suggests_near_names():
    with pytest.raises(UnknownNameError) as err:
        canonical_billing("montly")
    assert "monthly" in str(err.value.hint)
