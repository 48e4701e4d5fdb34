"""Golden output of ``planner.views.history``: the price history of a few stored prices, rendered."""

from __future__ import annotations

from planner.answers.history import price_history
from planner.pricing.cost import OfferQuery
from planner.views.history import render_history
from tests.helpers.views import TODAY, store_prices


def test_a_history_renders_as_before(engine, tmp_path):
    store_prices(engine, tmp_path)
    found = price_history(engine, "A100", OfferQuery.build(["A100"]), 30, TODAY)
    assert render_history(found) == HISTORY
    none = price_history(engine, "H800", OfferQuery.build(["H800"]), 30, TODAY)
    assert render_history(none) == HISTORY_NONE


# What the view prints, byte for byte (since 2026-12: the price change is like for like).
HISTORY = """\
History of A100-40GB, A100-80GB over the 30 day(s) to 2026-11-25 (UTC days; CNY per GPU-hour):
No price since 2026-11-25 (6 day(s) ago): the window ends at the newest price, not today. `planner refresh` brings today's prices.
day(s)      provider  gpu        billing    instances  min CNY/GPU-h  max CNY/GPU-h  price change  stock
----------  --------  ---------  ---------  ---------  -------------  -------------  ------------  -----
2026-11-20  tencent   A100-40GB  on_demand          1          28.64          28.64             -  -
2026-11-10  aliyun    A100-80GB  on_demand          1          31.25          31.25             -  -
2026-11-25  aliyun    A100-80GB  on_demand          1          30.00          30.00         -4.0%  -

price change: of the cheapest price over the instances priced on both days, never a change of mix.
stock: sold out / available among the instances that said so, or idle/total GPUs (AutoDL)."""


HISTORY_NONE = """\
No prices for H800-80GB in the last 30 day(s). Try --days, without --provider/--billing, or `planner refresh`."""
