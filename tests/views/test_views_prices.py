"""Golden output of ``planner.views.prices``: the latest prices, and what a miss says."""

from __future__ import annotations

from planner.answers.prices import latest
from planner.pricing.cost import OfferQuery
from planner.views.prices import render_prices
from tests.helpers.views import freeze_today, store_prices


def test_prices_render_as_before(engine, tmp_path, monkeypatch):
    freeze_today(monkeypatch)
    store_prices(engine, tmp_path)
    assert render_prices(latest(engine, OfferQuery.build(["A100"]))) == PRICES
    assert render_prices(latest(engine, OfferQuery.build(["A100"], ["aliyun"], ["beijing"]))) == PRICES_NONE


# What the views printed before they moved out of planner/commands/, byte for byte.
PRICES = """\
gpu        provider  region      instance                 gpus  billing              price  CNY/GPU-h (list)  stock  observed    source
---------  --------  ----------  -----------------------  ----  ---------  ---------------  ----------------  -----  ----------  ------
A100-40GB  tencent   ap-beijing  GT4.4XLARGE96               1  on_demand   28.64 CNY/hour             28.64  -      2026-11-20  -
A100-80GB  aliyun    cn-beijing  ecs.gn7e-c16g1.32xlarge     8  on_demand  240.00 CNY/hour             30.00  -      2026-11-25  -"""


PRICES_NONE = """\
No prices match these filters. Hint: regions look like cn-beijing."""
