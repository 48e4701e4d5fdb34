"""``planner gpus --value``: TFLOPS and memory per CNY, on a real database (SQLite, and PostgreSQL in CI).

The prices are round numbers so every figure can be checked by hand: A100-80GB, 312 dense TFLOPS at 10 CNY
per GPU-hour, is 31.2 TFLOPS per CNY-hour.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import replace
from decimal import Decimal

import pytest
from sqlalchemy import insert

from db.queries import latest_prices
from db.schema import availability
from planner.answers.value import check_options, per_unit, purchase_price, value_ranking
from planner.catalog import get_model
from planner.config import load_config
from planner.errors import UnknownNameError
from planner.ingest.importer import import_csv
from planner.pricing.query import OfferQuery, models
from planner.views.gpus import render_value
from tests.conftest import price_row, write_csv
from tests.helpers.cli import loaded

FX = load_config(env={}).section("fx")  # USD = 7.10

ROWS = [
    price_row(provider="tencent", instance_type="A100x1", gpu_model="A100-80GB", price="10"),
    price_row(provider="aliyun", region="cn-beijing", instance_type="A100x8", gpu_model="A100-80GB", gpu_count=8, price="96"),
    price_row(provider="aliyun", region="cn-beijing", instance_type="H100x8", gpu_model="H100-80GB", gpu_count=8, price="320"),
    price_row(provider="aliyun", region="cn-beijing", instance_type="H800x8", gpu_model="H800-80GB", gpu_count=8, price="240"),
    price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB", price="2"),
    price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB", billing="spot", price="0.5"),
    price_row(provider="volcengine", region="cn-beijing", instance_type="T4x1", gpu_model="T4-16GB", price="1", currency="USD"),
    price_row(provider="tencent", instance_type="A100-40x1", gpu_model="A100-40GB", billing="monthly", price="7300"),
    price_row(provider="aliyun", region="cn-beijing", instance_type="vgn-L4-half", gpu_model="L4-24GB", gpu_count=0.5, price="3"),
    price_row(provider="aliyun", region="cn-beijing", instance_type="P100x1", gpu_model="P100-16GB", price="4"),
]  # fmt: skip


@pytest.fixture
def priced(engine, tmp_path):
    import_csv(engine, write_csv(tmp_path / "prices.csv", ROWS), FX)
    return engine


def rank(engine, query=None, include_variants=False, **kwargs):
    chosen, left_out = models(
        OfferQuery.build([query] if query else [], include_variants=True), include_variants
    )
    with engine.connect() as conn:
        sort = kwargs.pop("sort", "tflops")
        query = check_options(sort, kwargs.pop("providers", ()), kwargs.pop("billing", ()))[1]
        return value_ranking(conn, chosen, FX, query, sort=sort, left_out=left_out, **kwargs)


def by_gpu(result):
    return {r.gpu_model: r for r in result.ranked}


def why(result):
    return {n.gpu_model: n.reason for n in result.not_ranked}


def test_tflops_per_cny_hour_by_hand_and_ranked_best_first(priced):
    result = rank(priced)
    assert [r.gpu_model for r in result.ranked] == ["RTX4090-24GB", "A100-80GB", "H100-80GB", "T4-16GB"]
    assert [r.rank for r in result.ranked] == [1, 2, 3, 4]
    got = by_gpu(result)
    a100 = got["A100-80GB"]
    assert a100.offer.cny_per_gpu_hour == Decimal("10")
    assert a100.tflops_per_cny_hour == Decimal("31.2")  # 312 / 10
    assert a100.memory_gb_per_cny_hour == Decimal("8")  # 80 / 10
    # The cheapest offer wins: 10 CNY for one GPU, not 96 / 8 = 12 on the 8-GPU instance.
    assert (a100.offer.provider, a100.offer.instance_type) == ("tencent", "A100x1")
    rtx = got["RTX4090-24GB"]
    assert (rtx.tflops_per_cny_hour, rtx.memory_gb_per_cny_hour) == (Decimal("82.6"), Decimal("12"))
    assert result.billing == ("on_demand",) and result.from_snapshot is False
    assert result.as_of == dt.datetime(2026, 11, 1)


def test_multi_gpu_instance_price_is_divided_per_gpu(priced):
    h100 = by_gpu(rank(priced))["H100-80GB"]
    assert (h100.offer.unit_price, h100.offer.gpus_per_instance) == (Decimal("320"), 8)
    assert h100.offer.cny_per_gpu_hour == Decimal("40")
    assert h100.tflops_per_cny_hour == Decimal("24.725")  # 989 / 40
    assert h100.memory_gb_per_cny_hour == Decimal("2")


def test_foreign_price_converted_with_fx(priced):
    t4 = by_gpu(rank(priced))["T4-16GB"]
    assert (t4.offer.currency, t4.offer.unit_price) == ("USD", Decimal("1"))
    assert t4.offer.cny_per_gpu_hour == Decimal("7.1")  # 1 USD x 7.10
    assert t4.tflops_per_cny_hour == Decimal("9.1549")  # 65 / 7.1
    assert t4.memory_gb_per_cny_hour == Decimal("2.2535")  # 16 / 7.1
    with priced.connect() as conn:
        dearer = value_ranking(conn, [get_model("T4-16GB")], FX | {"USD": 10})
    assert dearer.ranked[0].offer.cny_per_gpu_hour == Decimal("10")


def test_sort_memory_ranks_by_gb_per_cny_hour(priced):
    result = rank(priced, sort="memory")
    # P100 has no TFLOPS figure, so it is ranked by memory only: 16 GB / 4 CNY.
    assert [r.gpu_model for r in result.ranked] == [
        "RTX4090-24GB",  # 12
        "A100-80GB",  # 8
        "P100-16GB",  # 4
        "T4-16GB",  # 2.2535
        "H100-80GB",  # 2
    ]
    assert by_gpu(result)["P100-16GB"].tflops_per_cny_hour is None
    assert "P100-16GB" not in why(result)


def test_models_without_a_price_or_a_figure_are_listed_not_ranked(priced):
    reasons = why(rank(priced))
    assert reasons["V100-16GB"] == "no on_demand price"
    assert reasons["A100-40GB"] == "no on_demand price"  # monthly only, and on-demand is the default
    assert reasons["P100-16GB"] == "no dense TFLOPS figure in the catalog"
    assert reasons["L4-24GB"] == "only vGPU slices are offered"
    assert "A800-80GB" not in reasons and "H800-80GB" not in reasons  # variants are not asked about


def test_spot_only_when_asked(priced):
    assert by_gpu(rank(priced))["RTX4090-24GB"].offer.billing == "on_demand"
    spot = rank(priced, billing=["spot"])
    assert [r.gpu_model for r in spot.ranked] == ["RTX4090-24GB"]
    assert spot.ranked[0].offer.cny_per_gpu_hour == Decimal("0.5")
    assert spot.ranked[0].tflops_per_cny_hour == Decimal("330.4")
    assert why(spot)["A100-80GB"] == "no spot price"


def test_subscription_counts_per_hour_of_its_period(priced):
    monthly = rank(priced, billing=["monthly"])
    a100 = by_gpu(monthly)["A100-40GB"]
    assert a100.offer.cny_per_gpu_hour == Decimal("10")  # 7300 CNY / 730 hours
    assert a100.tflops_per_cny_hour == Decimal("31.2")
    both = rank(priced, billing=["on_demand", "payg", "monthly"])
    assert both.billing == ("on_demand", "monthly")
    assert {"A100-40GB", "A100-80GB"} <= set(by_gpu(both))


def test_provider_filter(priced):
    result = rank(priced, providers=["AutoDL"])
    assert [r.gpu_model for r in result.ranked] == ["RTX4090-24GB"]
    assert result.providers == ("autodl",)
    assert why(result)["A100-80GB"] == "no on_demand price at autodl"
    with pytest.raises(UnknownNameError):
        rank(priced, providers=["aws"])


def test_china_variants_only_when_asked_and_labelled(priced):
    plain = rank(priced)
    assert "H800-80GB" not in by_gpu(plain)
    assert plain.variants_left_out == ("H800-80GB",)  # it has a price: the table says so
    with_variants = rank(priced, include_variants=True)
    h800 = by_gpu(with_variants)["H800-80GB"]
    assert h800.china_variant is True and h800.offer.cny_per_gpu_hour == Decimal("30")
    assert h800.tflops_per_cny_hour == Decimal("32.9667")  # 989 / 30
    assert [r.gpu_model for r in with_variants.ranked][:3] == ["RTX4090-24GB", "H800-80GB", "A100-80GB"]
    assert with_variants.variants_left_out == ()
    # Naming a variant selects it; a family brings its variants only with include_variants.
    assert [r.gpu_model for r in rank(priced, "H800").ranked] == ["H800-80GB"]
    assert [r.gpu_model for r in rank(priced, "A100").ranked] == ["A100-80GB"]
    assert why(rank(priced, "A100")) == {"A100-40GB": "no on_demand price"}


def add_stock(engine, gpu_model, instance_type, status, idle=None):
    with engine.begin() as conn:
        row = next(
            r
            for r in latest_prices(conn, gpu_models=[gpu_model], billing=["on_demand"])
            if r.instance_type == instance_type
        )
        conn.execute(
            insert(availability).values(
                instance_id=row.instance_id,
                billing="on_demand",
                run_id=1,
                observed_at=dt.datetime(2026, 11, 1),
                observed_on=dt.date(2026, 11, 1),
                stock_status=status,
                idle_gpus=idle,
            )
        )


def test_sold_out_offer_is_passed_over_and_marked_when_all_are(priced):
    add_stock(priced, "A100-80GB", "A100x1", "sold_out")
    a100 = by_gpu(rank(priced))["A100-80GB"]
    assert (a100.offer.instance_type, a100.offer.cny_per_gpu_hour, not a100.offer.availability.rentable) == (
        "A100x8",
        Decimal("12"),
        False,
    )
    assert a100.tflops_per_cny_hour == Decimal("26")  # 312 / 12
    add_stock(priced, "RTX4090-24GB", "RTX 4090", None, idle=0)  # AutoDL: no idle GPU
    result = rank(priced)
    rtx = by_gpu(result)["RTX4090-24GB"]
    assert (rtx.offer.cny_per_gpu_hour, rtx.offer.availability.rentable) == (Decimal("2"), False)
    text = render_value(result)
    assert "autodl RTX 4090 on_demand (sold out)" in text and "(sold out): " in text  # the mark, explained


def test_an_offer_short_of_idle_gpus_is_marked_with_its_own_state_not_sold_out(priced):
    add_stock(priced, "H100-80GB", "H100x8", None, idle=4)  # 4 idle of the 8 the instance needs
    result = rank(priced)
    h100 = by_gpu(result)["H100-80GB"]
    assert h100.offer.availability.words == "short of idle GPUs"
    text = render_value(result)
    assert "H100x8 on_demand (short of idle GPUs)" in text and "(sold out)" not in text
    assert "(short of idle GPUs): " in text  # the mark, explained


def test_buy_ranks_per_10k_cny_of_the_catalog_price(priced):
    result = rank(priced, buy=True)
    got = by_gpu(result)
    rtx_model = get_model("RTX4090-24GB")
    rtx = got["RTX4090-24GB"]
    assert rtx.purchase.cny == rtx_model.purchase_price_cny and rtx.purchase.basis == "cny"
    assert (rtx.purchase.date, rtx.purchase.source) == (
        rtx_model.purchase_price_date,
        rtx_model.purchase_price_source,
    )
    expected = Decimal("165.2") * 10000 / rtx_model.purchase_price_cny
    assert rtx.tflops_per_10k_cny == expected.quantize(Decimal("0.0001"))
    assert rtx.memory_gb_per_10k_cny == (Decimal(24) * 10000 / rtx_model.purchase_price_cny).quantize(
        Decimal("0.0001")
    )
    assert rtx.tflops_per_cny_hour == Decimal("82.6")  # the rental figures ride along
    figures = [r.tflops_per_10k_cny for r in result.ranked]
    assert figures == sorted(figures, reverse=True)
    for r in result.ranked:  # every ranked model has a purchase price; rental only where priced
        assert r.purchase is not None
        assert (r.offer is None) == (r.tflops_per_cny_hour is None)
    reasons = why(result)
    assert all(
        reasons[m.name] == "no purchase price in the catalog"
        for m in models(OfferQuery(), include_variants=False)[0]
        if m.purchase_price_cny is None and m.purchase_price_usd is None
    )
    memory = [r.memory_gb_per_10k_cny for r in rank(priced, buy=True, sort="memory").ranked]
    assert memory == sorted(memory, reverse=True)


def test_purchase_price_china_price_first_then_us_price_at_fx():
    model = get_model("RTX4090-24GB")
    china = replace(model, purchase_price_cny=Decimal(13000), purchase_price_usd=Decimal(1599))
    assert purchase_price(china, Decimal("7.1")).cny == Decimal(13000)
    us_only = replace(model, purchase_price_cny=None, purchase_price_usd=Decimal(2000))
    price = purchase_price(us_only, Decimal("7.1"))
    assert (price.cny, price.basis) == (Decimal("14200"), "usd")
    assert purchase_price(us_only, None) is None  # no [fx] USD rate: no price
    assert per_unit(312, Decimal(71000), Decimal(10000)) == Decimal("43.9437")
    assert per_unit(None, Decimal(10)) is None and per_unit(312, None) is None


# --- the command ---


def import_rows(run_cli, tmp_path):
    result = run_cli("import", str(write_csv(tmp_path / "p.csv", ROWS)))
    assert result.exit_code == 0, result.output


def test_table_with_notes_and_the_models_not_ranked(run_cli, tmp_path):
    import_rows(run_cli, tmp_path)
    result = run_cli("gpus", "--value")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.lstrip().startswith("#"))
    assert header.split()[:3] == ["#", "GPU", "TFLOPS"]
    assert "TFLOPS per CNY-h" in header and "GB per CNY-h" in header and "purchase" not in header
    first = next(line for line in lines if line.startswith("1 "))
    assert first.split()[:5] == ["1", "RTX4090-24GB", "165.2", "24", "2.00"]
    assert "autodl RTX 4090 on_demand" in first
    assert re.search(r"  82\.60 +12\.00  +[\d,]+ d", first), first  # then the price's age in days
    assert "dense BF16" in result.stdout
    not_ranked = [line for line in lines if line.startswith("Not ranked:")]
    assert len(not_ranked) == 1 and "L4-24GB (only vGPU slices are offered)" in not_ranked[0]
    assert "China variants left out: H800-80GB" in result.stdout
    assert "bundled snapshot" not in result.stdout


def test_buy_implies_value_and_adds_purchase_columns(run_cli, tmp_path):
    import_rows(run_cli, tmp_path)
    result = run_cli("gpus", "--buy", "--include-variants")
    assert result.exit_code == 0, result.output
    assert "TFLOPS per 10k CNY" in result.stdout and "purchase CNY" in result.stdout
    assert "H800-80GB(V)" in result.stdout and "(V) China variant" in result.stdout
    row = next(line for line in result.stdout.splitlines() if "RTX4090-24GB " in line)
    assert f"{get_model('RTX4090-24GB').purchase_price_cny:,.0f}" in row
    assert "17,800 (2026-08-13)" in row  # a 2026 China street price, with the day it was seen
    h800 = next(line for line in result.stdout.splitlines() if "H800-80GB(V)" in line)
    assert "350,000 (2023-10)" in h800  # an old price shows its age beside it
    assert "purchase CNY (as of)" in result.stdout and "warns when it is over a year old" in result.stdout


def test_json_keys(run_cli, tmp_path):
    import_rows(run_cli, tmp_path)
    doc = json.loads(run_cli("gpus", "--value", "--format", "json").stdout)
    assert set(doc) == {
        "sort", "buy", "billing", "providers", "as_of", "from_snapshot", "ranked", "not_ranked",
        "variants_left_out", "scope", "cheaper_outside_scope",
    }  # fmt: skip
    a100 = next(r for r in doc["ranked"] if r["gpu_model"] == "A100-80GB")
    assert (a100["rank"], a100["tflops_per_cny_hour"], a100["memory_gb_per_cny_hour"]) == (2, 31.2, 8)
    assert a100["cny_per_gpu_hour"] == 10 and a100["provider"] == "tencent"
    assert set(a100) == {
        "rank", "gpu_model", "china_variant", "dense_tflops", "memory_gb", "cny_per_gpu_hour", "cny_per_gpu_hour_basis",
        "tflops_per_cny_hour", "memory_gb_per_cny_hour", "provider", "region", "instance_type",
        "gpus_per_instance", "billing", "unit_price", "unit", "currency", "observed_at", "age_days",
        "from_snapshot", "source", "gpu_note", "sold_out", "stock_state",
    }  # fmt: skip
    assert {"gpu_model": "L4-24GB", "reason": "only vGPU slices are offered"} in doc["not_ranked"]
    buy = json.loads(run_cli("gpus", "--value", "--buy", "--format", "json").stdout)
    assert buy["buy"] is True
    rtx = next(r for r in buy["ranked"] if r["gpu_model"] == "RTX4090-24GB")
    assert {
        "purchase_price_cny", "purchase_price_basis", "purchase_price_date", "purchase_price_source",
        "tflops_per_10k_cny", "memory_gb_per_10k_cny",
    } <= set(rtx)  # fmt: skip


def test_csv_columns(run_cli, tmp_path):
    import_rows(run_cli, tmp_path)
    lines = run_cli("gpus", "--value", "--sort", "memory", "--format", "csv").stdout.splitlines()
    assert lines[0].startswith("rank,gpu_model,china_variant,dense_tflops,memory_gb,cny_per_gpu_hour,")
    assert lines[1].startswith(
        '1,RTX4090-24GB,false,165.2,24,2.00,"on_demand, per hour",82.6,12,autodl,'
    )  # 24 GB: a whole number; money to 2 places, compute per CNY as it is
    assert len(lines) == 1 + 5  # the ranked models only
    buy = run_cli("gpus", "--buy", "--format", "csv").stdout.splitlines()
    assert buy[0].endswith(
        "purchase_price_source,purchase_price_obtained,purchase_price_confidence,tflops_per_10k_cny,"
        "memory_gb_per_10k_cny"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--value", "--sort", "flops"], "unknown sort 'flops'"),
        (["--buy", "--sort", "price"], "unknown sort 'price'"),
        (["--sort", "memory"], "--sort applies only to the --value"),
        (["--provider", "autodl"], "--provider applies only to the --value"),
        (["--billing", "monthly"], "--billing applies only to the --value"),
        (["--value", "--billing", "fortnightly"], "unknown billing mode 'fortnightly'"),
        (["--buy", "--provider", "aws"], "unknown provider 'aws'"),
        (["--value", "--gpu", "A1000"], "unknown GPU 'A1000'"),
    ],
)
def test_mistakes_are_one_line_exit_2(run_cli, args, message):
    result = run_cli("gpus", *args)
    assert result.exit_code == 2, result.output
    first = result.stderr.splitlines()[0]
    assert first.startswith("Error: ") and message in first
    assert "Traceback" not in result.output


def test_fresh_database_ranks_from_the_bundled_snapshot(run_cli):
    result = run_cli("gpus", "--value")
    assert result.exit_code == 0, result.output
    assert "loaded the bundled snapshot" in result.stderr
    header = result.stdout.splitlines()[1]  # the quote's header rule (planner.pricing.freshness.prices_line)
    assert header.startswith("Prices observed ") and "all from the bundled snapshot" in header
    assert " 1 " in result.stdout and "Not ranked:" in result.stdout
    doc = json.loads(run_cli("gpus", "--value", "--buy", "--format", "json").stdout)
    assert doc["from_snapshot"] is True and doc["ranked"]
    assert all(r["from_snapshot"] for r in doc["ranked"] if r["provider"])


def test_help_has_the_value_examples(run_cli):
    result = run_cli("gpus", "--help")
    assert "planner gpus --gpu A100 --include-variants" in result.stdout  # the old examples stay
    assert "planner gpus --value" in result.stdout and "planner gpus --value --buy" in result.stdout


def test_catalog_listing_opens_no_database(tmp_path):
    # In a fresh interpreter: no SQLAlchemy imported and no database file created.
    code, heavy, output = loaded(tmp_path, "gpus")
    assert code == 0 and "A100-80GB" in output, output
    assert heavy == [] and not (tmp_path / "p.db").exists(), output
    code, heavy, output = loaded(tmp_path, "gpus", "--gpu", "A100", "--format", "json")
    assert code == 0 and heavy == [] and not (tmp_path / "p.db").exists(), output


@pytest.mark.parametrize(
    "args", [("--value", "--sort", "flops"), ("--buy", "--provider", "aws"), ("--sort", "memory")]
)
def test_value_mistakes_are_answered_before_the_database(tmp_path, args):
    code, heavy, output = loaded(tmp_path, "gpus", *args)
    assert code == 2 and heavy == [] and not (tmp_path / "p.db").exists(), output


def test_value_on_a_fresh_file_database(tmp_path):
    code, heavy, output = loaded(tmp_path, "gpus", "--value")
    assert code == 0 and "all from the bundled snapshot" in output, output
    assert (tmp_path / "p.db").exists()


def test_buy_says_how_each_purchase_figure_was_obtained(run_cli, priced):
    """A purchase figure that is the middle of an estimate band is marked as such, not shown as a price
    seen; JSON says how every figure was obtained and how far to trust it."""
    doc = json.loads(run_cli("gpus", "--value", "--buy", "--format", "json").stdout)
    bought = [r for r in doc["ranked"] if r["purchase_price_cny"] is not None]
    assert bought and all(r["purchase_price_obtained"] and r["purchase_price_confidence"] for r in bought)
    by_gpu = {r["gpu_model"]: r for r in bought}
    assert by_gpu["A100-80GB"]["purchase_price_obtained"] == "estimate midpoint"
    text = run_cli("gpus", "--value", "--buy").stdout
    a100 = next(line for line in text.splitlines() if " A100-80GB " in line)
    assert "143,750≈" in a100 and "the middle of an estimate band" in text
