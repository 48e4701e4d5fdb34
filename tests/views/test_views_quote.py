"""Golden output of ``planner.views.quote``: a quote on a few stored prices, rendered."""

from __future__ import annotations

from planner.answers.quote import QuoteRequest, quote
from planner.views.quote import render_quote
from tests.helpers.views import FX, freeze_today, store_prices


def test_a_quote_renders_as_before(engine, tmp_path, monkeypatch):
    freeze_today(monkeypatch)
    store_prices(engine, tmp_path)
    with engine.connect() as conn:
        result = quote(conn, QuoteRequest(gpu="A100", hours=100, gpus=2), FX)
    assert render_quote(result) == QUOTE


def test_a_quote_with_no_prices_renders_as_before(engine, tmp_path, monkeypatch):
    freeze_today(monkeypatch)
    store_prices(engine, tmp_path)
    with engine.connect() as conn:
        result = quote(conn, QuoteRequest(gpu="H800", hours=10), FX)
    assert render_quote(result) == QUOTE_NONE


def test_providers_renting_on_application_come_after_the_priced_options(engine, tmp_path, monkeypatch):
    freeze_today(monkeypatch)
    store_prices(engine, tmp_path)
    with engine.connect() as conn:
        result = quote(conn, QuoteRequest(gpu="A100", hours=100, gpus=2, include_variants=True), FX)
    text = render_quote(result)
    assert text.endswith(QUOTE_ON_APPLICATION_TAIL)
    assert text.index("Recommendation: tencent GT4.4XLARGE96") < text.index("Rented only on application")
    assert [o.offer.gpu_model for o in result.options] == ["A100-40GB", "A100-80GB"]  # no A800 option
    with engine.connect() as conn:  # the A100 alone: nobody rents it only on application
        alone = quote(conn, QuoteRequest(gpu="A100", hours=100, gpus=2), FX)
    assert render_quote(alone) == QUOTE


# What the views printed before they moved out of planner/commands/, byte for byte.
QUOTE = """\
Quote: 2 x A100 (A100-40GB, A100-80GB) for 100 h over 5 day(s)
Prices observed 2026-11-20 to 2026-11-25.
#  provider  region      instance                 gpu        gpus x n  link             billing     unit price  total CNY  CNY/GPU-h for 100 h  30d min-med-max       trend  observed    age   source
-  --------  ----------  -----------------------  ---------  --------  ---------------  ---------  -----------  ---------  -------------------  --------------------  -----  ----------  ----  ------
1  tencent   ap-beijing  GT4.4XLARGE96            A100-40GB  1 x 2     network only     on_demand   28.64/hour   5,728.00                28.64  -                     -      2026-11-20  11 d  -
2  aliyun    cn-beijing  ecs.gn7e-c16g1.32xlarge  A100-80GB  8 x 1     NVLink 600 GB/s  on_demand  240.00/hour  24,000.00               120.00  240.00-245.00-250.00  down   2026-11-25  6 d   -

Recommendation: tencent GT4.4XLARGE96 (ap-beijing), 2 instance(s) on on_demand: CNY 5,728.00 in total, CNY 28.64 per GPU-hour (stock not stated by the provider).

'gpus x n' is GPUs per instance x instances; whole instances are paid for, idle GPUs included.
'link': how the GPUs talk ('+ network' and 'network only': between instances, over the provider's network). Totals within 0.5% (or 1 CNY) go to fewer machines, then the wider NVLink."""


QUOTE_NONE = """\
Quote: 1 x H800 (H800-80GB) for 10 h over 1 day(s)
No prices match. Try without filters, `planner prices`, or `planner refresh`.

Rented only on application (no public price; not an option, never recommended):
  tencent: H800-80GB, family HCCPNV5: rented only after a ticket or whitelist; not offered in the price calculator (seen 2026-09-15)
  (`--format json` gives each source, under on_application.)"""


# The A100 asked with its China variant: the A800 is rented on application at Tencent, listed after the
# priced options and the notes, with no price.
QUOTE_ON_APPLICATION_TAIL = """\
'link': how the GPUs talk ('+ network' and 'network only': between instances, over the provider's network). Totals within 0.5% (or 1 CNY) go to fewer machines, then the wider NVLink.

Rented only on application (no public price; not an option, never recommended):
  tencent: A800-80GB: rented only after a ticket or whitelist; not offered in the price calculator (seen 2026-09-15)
  (`--format json` gives each source, under on_application.)"""
