"""Golden output of ``planner.views.plan``: a LoRA plan over a few stored prices, rendered."""

from __future__ import annotations

from planner.answers.plan import PlanRequest, Workload, plan_for
from planner.pricing.cost import OfferQuery
from planner.views.plan import render_plan
from tests.helpers.views import FX, freeze_today, store_prices


def test_a_plan_renders_as_before(engine, tmp_path, monkeypatch):
    freeze_today(monkeypatch)
    store_prices(engine, tmp_path)
    workload = Workload(params=None, task="lora", tokens=1_000_000_000, model="qwen2.5-7b")
    request = PlanRequest(workload, OfferQuery.build(["A100", "RTX4090"]))
    with engine.connect() as conn:
        result = plan_for(conn, request, FX)
    assert render_plan(result) == PLAN


# What the views printed before they moved out of planner/commands/, byte for byte; the FLOPs and hours
# since issue 27 (LoRA at 4·N FLOPs per token, GeForce LoRA at 0.8 × the data-centre MFU).
PLAN = """\
Plan: lora of qwen2.5-7b, 7.6B parameters on 1.0B tokens (bf16, seq 2048 × batch 1, gradient checkpointing, LoRA rank 16): 22.8 GB in all, 3.29e+19 FLOPs
Prices observed 2026-08-01 to 2026-11-25.

#  gpu           GPUs  instances  link             wall h  provider  region      instance                 billing    total CNY  CNY/GPU-h  30d   observed    age          marks
-  ------------  ----  ---------  ---------------  ------  --------  ----------  -----------------------  ---------  ---------  ---------  ----  ----------  -----------  ---------------
1  RTX4090-24GB     1  1 x 1      -                 164.7  autodl    west-B      RTX 4090                 on_demand     326.06       1.98  -     2026-08-01  122 d (old)  pareto
2  A100-40GB        1  1 x 1      -                  69.8  tencent   ap-beijing  GT4.4XLARGE96            on_demand   1,997.77      28.64  -     2026-11-20  11 d         pareto
3  A100-80GB        8  1 x 8      NVLink 600 GB/s     8.7  aliyun    cn-beijing  ecs.gn7e-c16g1.32xlarge  on_demand   2,092.63      30.00  down  2026-11-25  6 d          fastest, pareto

Cheapest: 1 x RTX4090-24GB for 164.7 h, CNY 326.06 (1 x autodl RTX 4090, on_demand)
Fastest:  8 x A100-80GB for 8.7 h, CNY 2,092.63 (1 x aliyun ecs.gn7e-c16g1.32xlarge, on_demand; NVLink 600 GB/s)
Pareto (no other option is both cheaper and faster): RTX4090-24GB, A100-40GB, A100-80GB
Hours assume the GPUs split the job evenly (ZeRO-3/FSDP) at the default MFU for the task, GPU generation and model scale (docs/calibration.md); a fine-tuning step takes the longer of its compute and its collectives over each option's links (NVLink or PCIe inside a machine, an assumed 25 Gbit/s network between machines: --network-gbps) (--mfu to change); 'instances' is count x GPUs each. '30d' is the price trend over 30 days.
age: days since the price was last seen (first seen or confirmed); (old): more than 90 days, prices may have moved since: run `planner refresh` for today's prices, or check the provider's site.
'link': how an option's GPUs talk, per GPU model (NVLink is per GPU, both directions; a PCIe-packaged instance may have less, a bridge joins pairs only); '+ network' and 'network only': between instances, over the provider's network, not NVLink, so expect a lower MFU; '(one machine)': a marketplace's (AutoDL) GPUs rented together on one of its machines (up to 8), which needs that many idle on one machine."""


def test_the_trend_column_names_the_window_the_plan_read(engine, tmp_path, monkeypatch):
    """[quote] history_days = 7: the column and its note say 7 days, as the trend was read over 7."""
    freeze_today(monkeypatch)
    store_prices(engine, tmp_path)
    workload = Workload(params=None, task="lora", tokens=1_000_000_000, model="qwen2.5-7b")
    request = PlanRequest(workload, OfferQuery.build(["A100"]), history_days=7)
    with engine.connect() as conn:
        result = plan_for(conn, request, FX)
    text = render_plan(result)
    header = next(line for line in text.splitlines() if line.startswith("#  gpu"))
    assert " 7d " in header and "30d" not in header
    assert "'7d' is the price trend over 7 days." in text
