"""Golden output of ``planner.views.refresh``: a refresh where one provider stored and one failed."""

from __future__ import annotations

from planner.ingest.refresh import RefreshSummary
from planner.ingest.runs import ProviderOutcome
from planner.views.refresh import render_summary
from vocab import RunStatus

LONG_ERROR = (
    "timed out after 30 s reading https://ecs.aliyuncs.com/?Action=DescribePrice&RegionId=cn-beijing "
    "(3 attempts)"
)


def test_a_refresh_summary_renders_as_before():
    summary = RefreshSummary(
        (
            ProviderOutcome("tencent", RunStatus.OK, 120, 100, 3, 4.25, None, (), 7, mode="account",
                            already_present=20),
            ProviderOutcome("aliyun", RunStatus.FAILED, 0, 0, 0, 30.04, LONG_ERROR, (), 8, mode="public",
                            notes=("region cn-hangzhou: no GPU instances",)),
        )
    )  # fmt: skip
    assert render_summary(summary) == REFRESH


# What the views printed before they moved out of planner/commands/, byte for byte.
REFRESH = """\
provider  status  mode     offers  new  changed  seconds  error
--------  ------  -------  ------  ---  -------  -------  --------------------------------------------------
tencent   ok      account     120  100        3      4.2  -
aliyun    failed  public        0    0        0     30.0  timed out after 30 s reading https://ecs.aliyuncs…

tencent:
  - 20 price(s) unchanged: confirmed, not stored again (a price is stored when it changes)

aliyun:
  - error: timed out after 30 s reading https://ecs.aliyuncs.com/?Action=DescribePrice&RegionId=cn-beijing (3 attempts)
  - region cn-hangzhou: no GPU instances

Exit code 1: aliyun failed; nothing of theirs was stored and their last good prices stay in use. `planner runs` shows the history.
Some providers ran without an account: `planner providers` says what to set to see more."""
