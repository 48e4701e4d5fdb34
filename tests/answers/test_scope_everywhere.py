"""The region scope of quote holds for every answer that picks offers: tco's rental side, the report's
cheapest table, its chart and the nightly digest (``planner.pricing.query``: one rule, one default,
one line for a cheaper option outside). And ``plan`` takes estimate's ``--zero-stage`` and
``--cpu-offload`` with the same meaning."""

from __future__ import annotations

import csv
import datetime as dt
import json
from decimal import Decimal
from pathlib import Path

import pytest

from tests.conftest import price_row, write_csv
from tests.helpers.cli import line_of

TODAY = dt.datetime.now(dt.UTC).date()
OBSERVED = (TODAY - dt.timedelta(days=10)).isoformat()
HK_OPTION = "aliyun cn-hongkong ecs.gn6i-c4g1.xlarge"  # the offer the "cheaper outside" notes name
OUTSIDE = "A cheaper option outside the mainland"

# Hong Kong cheapest, a mainland one dearer (the shape of the bundled snapshot's T4), on demand only.
HK_CHEAPER = [
    price_row(
        provider="aliyun",
        region=region,
        instance_type="ecs.gn6i-c4g1.xlarge",
        gpu_model="T4-16GB",
        price=price,
        observed_at=OBSERVED,
    )
    for region, price in (("cn-hongkong", "7.89"), ("cn-hangzhou", "11.63"))
]
TCO = ("tco", "--gpu", "T4", "--hours", "100", "--years", "1", "--purchase-price", "10000")


def load(run_cli, tmp_path: Path, rows: list[dict[str, object]]) -> None:
    result = run_cli("import", str(write_csv(tmp_path / "p.csv", rows)))
    assert result.exit_code == 0, result.output


def outside_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith("A cheaper option outside")]


# --- tco ---


def test_tco_rents_on_the_mainland_and_names_hong_kong_in_quotes_line(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER)
    result = run_cli(*TCO)
    assert result.exit_code == 0, result.output
    renting = next(line for line in result.stdout.splitlines() if line.startswith("Renting:"))
    assert "(cn-hangzhou)" in renting
    quote = run_cli("quote", "--gpu", "T4", "--hours", "100")
    # the same sentence as quote's, for the same 100 GPU-hours on one GPU
    assert outside_lines(result.stdout) == outside_lines(quote.stdout)
    (line,) = outside_lines(result.stdout)
    assert HK_OPTION in line and "CNY 789.00 in total" in line and "--scope all" in line
    doc = json.loads(run_cli(*TCO, "--format", "json").stdout)
    assert doc["scope"] == "mainland" and doc["rental"]["region"] == "cn-hangzhou"
    assert doc["cheaper_outside_scope"]["region"] == "cn-hongkong"
    assert doc["rent_cny_per_gpu_hour"] == pytest.approx(11.63)
    (row,) = csv.DictReader(run_cli(*TCO, "--format", "csv").stdout.splitlines())
    assert (row["scope"], row["rent_region"]) == ("mainland", "cn-hangzhou")


def test_tco_scope_all_rents_in_hong_kong_and_says_nothing_of_outside(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER)
    result = run_cli(*TCO, "--scope", "all")
    assert result.exit_code == 0, result.output
    assert "(cn-hongkong)" in result.stdout and not outside_lines(result.stdout)
    doc = json.loads(run_cli(*TCO, "--scope", "ALL", "--format", "json").stdout)
    assert doc["scope"] == "all" and doc["cheaper_outside_scope"] is None
    assert doc["rent_cny_per_gpu_hour"] == pytest.approx(7.89)


def test_tco_follows_the_configured_scope_and_the_flag_beats_it(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER)
    (tmp_path / "cwd" / "config.toml").write_text('[quote]\nscope = "all"\n', encoding="utf-8")
    assert json.loads(run_cli(*TCO, "--format", "json").stdout)["rental"]["region"] == "cn-hongkong"
    mainland = json.loads(run_cli(*TCO, "--scope", "mainland", "--format", "json").stdout)
    assert mainland["rental"]["region"] == "cn-hangzhou"


def test_tco_with_prices_only_outside_the_scope_says_where_they_are(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER[:1])
    result = run_cli(*TCO)
    assert result.exit_code == 2 and "Traceback" not in result.output
    error = line_of(result.stderr, "Error:")
    assert "no rental price for T4-16GB" in error and "in the mainland" in error
    assert "outside the mainland" in result.stderr and "--scope all" in result.stderr
    assert run_cli(*TCO, "--scope", "all").exit_code == 0


def test_tco_without_a_difference_in_scope_prints_no_outside_line(run_cli, tmp_path):
    load(run_cli, tmp_path, [dict(HK_CHEAPER[0], price="20"), HK_CHEAPER[1]])
    result = run_cli(*TCO)
    assert result.exit_code == 0, result.output
    assert not outside_lines(result.stdout)
    assert json.loads(run_cli(*TCO, "--format", "json").stdout)["cheaper_outside_scope"] is None


# --- the report ---


def report_json(run_cli, tmp_path: Path, *args: str) -> dict:
    result = run_cli("report", "--out", str(tmp_path / "out"), "--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def cheapest_rows(doc: dict) -> list[dict[str, str]]:
    path = next(f["path"] for f in doc["files"] if f["table"] == "cheapest")
    with open(path, encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def test_report_cheapest_table_is_mainland_and_names_hong_kong(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER)
    doc = report_json(run_cli, tmp_path)
    (row,) = cheapest_rows(doc)
    assert (row["region"], row["scope"], row["offers"]) == ("cn-hangzhou", "mainland", "1")
    assert doc["scope"] == "mainland"
    first, outside = doc["scope_notes"]
    assert "the mainland only" in first and "[quote] scope" in first
    assert (
        outside.startswith(OUTSIDE) and HK_OPTION in outside and "T4-16GB at CNY 7.89 per GPU-hour" in outside
    )
    table = run_cli("report", "--out", str(tmp_path / "out"))
    assert table.exit_code == 0, table.output
    assert outside in table.stdout.splitlines() and first in table.stdout.splitlines()


def test_report_scope_all_takes_hong_kong_from_the_flag_or_the_config(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER)
    doc = report_json(run_cli, tmp_path, "--scope", "all")
    (row,) = cheapest_rows(doc)
    assert (row["region"], row["scope"], row["offers"]) == ("cn-hongkong", "all", "2")
    (note,) = doc["scope_notes"]
    assert "every region" in note and '[quote] scope = "all"' in note
    (tmp_path / "cwd" / "config.toml").write_text('[quote]\nscope = "all"\n', encoding="utf-8")
    assert cheapest_rows(report_json(run_cli, tmp_path))[0]["region"] == "cn-hongkong"


def test_report_with_the_mainland_cheaper_names_nothing_outside(run_cli, tmp_path):
    load(run_cli, tmp_path, [dict(HK_CHEAPER[0], price="20"), HK_CHEAPER[1]])
    doc = report_json(run_cli, tmp_path)
    assert cheapest_rows(doc)[0]["region"] == "cn-hangzhou" and len(doc["scope_notes"]) == 1


def test_report_summary_chart_and_digest_keep_to_the_scope(run_cli, tmp_path, engine):
    from planner.alerts.digest import digest
    from planner.answers.report import cheapest_for
    from planner.config import load_config
    from reports.build import build_report
    from reports.summary import summarise

    load(run_cli, tmp_path, HK_CHEAPER)
    fx = load_config(env={}).section("fx")
    mainland = build_report(engine, TODAY, cheapest=cheapest_for((), (), fx, "mainland"))
    assert mainland.trend is not None
    assert list(mainland.trend["cny_per_gpu_hour"]) == [pytest.approx(11.63)]  # not Hong Kong's 7.89
    text = summarise(mainland).text
    assert "cover the mainland only" in text and HK_OPTION in line_of(text, OUTSIDE)
    assert "T4-16GB  CNY 11.63/GPU-h" in text
    title, markdown = digest(mainland)
    assert HK_OPTION in line_of(markdown, f"- {OUTSIDE}")
    every = build_report(engine, TODAY, cheapest=cheapest_for((), (), fx, "all"))
    assert every.trend is not None and list(every.trend["cny_per_gpu_hour"]) == [pytest.approx(7.89)]
    assert OUTSIDE not in summarise(every).text


def test_a_bad_configured_scope_stops_the_report_with_one_line(run_cli, tmp_path):
    (tmp_path / "cwd" / "config.toml").write_text('[quote]\nscope = "asia"\n', encoding="utf-8")
    result = run_cli("report", "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "[quote] scope" in result.stderr


# --- plan takes estimate's ZeRO options ---

A100_8 = [
    price_row(
        provider="tencent",
        region="ap-beijing",
        instance_type="GT4.41XLARGE948",
        gpu_model="A100-80GB",
        gpu_count=8,
        price="230",
        observed_at=OBSERVED,
    )
]
FULL_13B = ("--params", "13B", "--task", "full", "--tokens", "1B")


@pytest.mark.parametrize(
    "flags",
    [
        (),
        ("--zero-stage", "3"),
        ("--zero-stage", "2"),
        ("--zero-stage", "1", "--cpu-offload"),
        ("--cpu-offload",),
    ],
)
def test_plan_and_estimate_agree_on_memory_and_gpus_for_the_same_flags(run_cli, tmp_path, flags):
    load(run_cli, tmp_path, A100_8)
    est = json.loads(run_cli("estimate", *FULL_13B, "--gpu", "A100-80GB", *flags, "--format", "json").stdout)
    result = run_cli("plan", *FULL_13B, "--gpu", "A100-80GB", *flags, "--format", "json")
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    work = plan["workload"]
    assert work["memory_gb"] == pytest.approx(est["memory_gb"])
    assert work["breakdown"] == pytest.approx(est["breakdown"])
    assert (work["zero_stage"], work["cpu_offload_gb"]) == (
        est["zero_stage"],
        pytest.approx(est["cpu_offload_gb"]),
    )
    (option,) = plan["options"]
    assert option["gpus_needed"] == est["gpus_needed"]


def test_a_plan_that_needs_zero_3_is_left_out_at_stage_0_and_planned_at_stage_3(run_cli, tmp_path):
    load(run_cli, tmp_path, A100_8)
    est = json.loads(
        run_cli("estimate", *FULL_13B, "--gpu", "A100-80GB", "--zero-stage", "0", "--format", "json").stdout
    )
    assert est["gpus_needed"] is None and "use --zero-stage 3" in est["notes"][-1]
    low = run_cli("plan", *FULL_13B, "--zero-stage", "0")
    assert low.exit_code == 1, low.output  # no option: nothing to recommend
    assert "unsharded" in line_of(low.stdout, "ZeRO stage 0:")  # the note on the stage asked for
    left_out = line_of(low.stdout, "Left out: A100-80GB:")
    assert "ZeRO stage 0" in left_out and "228.8 GB of model states" in left_out
    doc = json.loads(run_cli("plan", *FULL_13B, "--zero-stage", "0", "--format", "json").stdout)
    assert doc["options"] == [] and doc["excluded"][0]["gpu_model"] == "A100-80GB"
    three = json.loads(run_cli("plan", *FULL_13B, "--zero-stage", "3", "--format", "json").stdout)
    (option,) = three["options"]
    needed = json.loads(
        run_cli("estimate", *FULL_13B, "--gpu", "A100-80GB", "--zero-stage", "3", "--format", "json").stdout
    )["gpus_needed"]
    assert option["gpu_model"] == "A100-80GB" and option["gpus_needed"] == needed == 3
    assert three["workload"]["zero_stage"] == 3
    assert three == json.loads(run_cli("plan", *FULL_13B, "--format", "json").stdout)  # 3 is the default


def test_plan_refuses_zero_options_for_inference_and_bad_stages_as_estimate_does(run_cli):
    for command in ("plan", "estimate"):
        result = run_cli(command, "--params", "7B", "--task", "inference", "--tokens", "1B", "--cpu-offload")
        assert result.exit_code == 2 and "training options" in result.stderr, command
        result = run_cli(command, *FULL_13B, "--zero-stage", "4")
        assert result.exit_code == 2 and "--zero-stage" in result.stderr, command


def test_plan_and_estimate_share_one_definition_of_the_options():
    from planner.commands.estimate import estimate as estimate_command
    from planner.commands.plan import plan as plan_command

    def option(command, name: str):  # noqa: ANN001, ANN202
        return next(p for p in command.params if p.name == name)

    for name in ("zero_stage", "cpu_offload"):
        plan, estimate = option(plan_command, name), option(estimate_command, name)
        assert (plan.opts, plan.help, plan.metavar, repr(plan.type)) == (
            estimate.opts,
            estimate.help,
            estimate.metavar,
            repr(estimate.type),
        )


# --- history ---


def test_history_keeps_to_the_scope_and_names_the_regions_left_out(run_cli, tmp_path):
    rows = [
        *HK_CHEAPER,
        dict(HK_CHEAPER[1], instance_type="ecs.gn6i-c8g1.2xlarge", price="13.00"),
    ]
    load(run_cli, tmp_path, rows)
    args = ("history", "--gpu", "T4", "--days", "30")
    doc = json.loads(run_cli(*args, "--format", "json").stdout)
    (day,) = doc["days"]
    assert (day["instances"], day["min_cny_per_gpu_hour"], day["max_cny_per_gpu_hour"]) == (2, 11.63, 13)
    assert doc["scope"] == "mainland" and doc["outside_scope"] == ["aliyun cn-hongkong"]
    table = run_cli(*args)
    assert table.exit_code == 0, table.output
    assert "aliyun cn-hongkong" in line_of(table.stdout, "Left out, outside the mainland:")
    every = json.loads(run_cli(*args, "--scope", "all", "--format", "json").stdout)
    (day,) = every["days"]
    assert (day["instances"], day["min_cny_per_gpu_hour"], day["max_cny_per_gpu_hour"]) == (3, 7.89, 13)
    assert every["outside_scope"] == [] and "Left out" not in run_cli(*args, "--scope", "all").stdout


def test_history_merges_the_stock_of_the_regions_it_keeps(run_cli, tmp_path, engine):
    from db import store
    from db.queries import price_history

    now = store.utcnow()
    keys = [("autodl", "west-B", "4090"), ("autodl", "beijing-A", "4090"), ("aliyun", "cn-hongkong", "G")]
    with engine.begin() as conn:
        run = store.start_run(conn, "autodl", "refresh")
        ids = store.upsert_instances(conn, [store.InstanceRow(*k, "RTX4090-24GB", 1) for k in keys])
        store.insert_prices(
            conn,
            [
                store.PriceRow(k, "on_demand", Decimal(p), "CNY", "hour", Decimal(p), now)
                for k, p in zip(keys, ("2.0", "1.8", "1.0"), strict=True)
            ],
            ids,
            run,
        )
        store.insert_availability(
            conn,
            [
                store.AvailabilityRow(keys[0], "on_demand", now, "available", 3, 8),
                store.AvailabilityRow(keys[1], "on_demand", now, "sold_out", 0, 8),
                store.AvailabilityRow(keys[2], "on_demand", now, "available", 5, 5),
            ],
            ids,
            run,
        )
        store.finish_run(conn, run, "ok")
    since = now.date() - dt.timedelta(days=1)
    with engine.connect() as conn:
        every = price_history(conn, ["RTX4090-24GB"], since)
        kept = price_history(conn, ["RTX4090-24GB"], since, in_scope=lambda p, r: r != "cn-hongkong")
    by_provider = {r.provider: r for r in kept}
    autodl = by_provider["autodl"]
    assert (autodl.instances, autodl.min_cny_per_gpu_hour, autodl.max_cny_per_gpu_hour) == (
        2,
        Decimal("1.8"),
        2,
    )
    assert (autodl.stock_known, autodl.sold_out, autodl.idle_gpus, autodl.total_gpus) == (2, 1, 3, 16)
    assert "aliyun" not in by_provider
    assert {r.provider: r for r in every}[
        "autodl"
    ] == autodl  # the unsplit query agrees where nothing is left out


@pytest.mark.parametrize(
    ("command", "example"),
    [
        ("tco", "planner tco --gpu T4 --hours 2000 --scope all"),
        ("report", "planner report --scope all"),
        ("history", "planner history --gpu T4 --scope all"),
        ("plan", "planner plan --params 13B --tokens 1B --task full --zero-stage 2 --cpu-offload"),
    ],
)
def test_help_shows_the_new_options_with_an_example(runner, command, example):
    from planner.cli import cli

    result = runner.invoke(cli, [command, "--help"])
    assert result.exit_code == 0 and example in result.output
    wanted = "--zero-stage" if command == "plan" else "--scope [mainland|all]"
    assert wanted in result.output
