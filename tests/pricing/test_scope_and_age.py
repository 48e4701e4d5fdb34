"""Issue 16's display: quotes, plans and ``gpus --value`` cover mainland China unless ``--scope all``
and name a cheaper option outside; every option shows its age, old prices are marked and a year-old
recommendation is warned about; one header rule (``planner.pricing.freshness.prices_line``) for all three."""

from __future__ import annotations

import datetime as dt
import json
from types import SimpleNamespace

import pytest

from planner.pricing.freshness import OLD_DAYS, STALE_DAYS, age_cell, prices_line, stale_warning
from planner.regions import region_scope
from tests.conftest import price_row, write_csv
from tests.helpers.cli import line_of

TODAY = dt.datetime.now(dt.UTC).date()


def days_ago(days: int) -> str:
    return (TODAY - dt.timedelta(days=days)).isoformat()


def load(run_cli, tmp_path, rows):
    result = run_cli("import", str(write_csv(tmp_path / "p.csv", rows)))
    assert result.exit_code == 0, result.output


def recommendation(stdout: str) -> str:
    return next(line for line in stdout.splitlines() if line.startswith("Recommendation:"))


# Hong Kong cheapest, a mainland one dearer: the shape of the bundled snapshot's T4.
HK_CHEAPER = [
    price_row(
        provider="aliyun",
        region="cn-hongkong",
        instance_type="ecs.gn6i-c4g1.xlarge",
        gpu_model="T4-16GB",
        price="7.89",
        observed_at=days_ago(10),
    ),
    price_row(
        provider="aliyun",
        region="cn-hangzhou",
        instance_type="ecs.gn6i-c4g1.xlarge",
        gpu_model="T4-16GB",
        price="11.63",
        observed_at=days_ago(10),
    ),
]


# --- mainland by default, on the bundled snapshot (a fresh install) ---
# Aliyun's T4 is cheapest in Hong Kong (7.89 CNY/h against 10.46 on the mainland, 2024-10-09); across
# providers AutoDL's T4 (0.82, 2026-09-15) undercuts both, so these quotes ask Aliyun alone.
ALIYUN_T4 = ("quote", "--gpu", "T4", "--hours", "100", "--provider", "aliyun")


def test_t4_quote_recommends_the_mainland_and_mentions_hong_kong(run_cli):
    result = run_cli(*ALIYUN_T4)
    assert result.exit_code == 0, result.output
    assert "loaded the bundled snapshot" in result.stderr
    best = recommendation(result.stdout)
    assert "cn-hongkong" not in best
    outside = [line for line in result.stdout.splitlines() if line.startswith("A cheaper option outside")]
    assert len(outside) == 1
    assert "mainland" in outside[0] and "aliyun cn-hongkong" in outside[0]
    assert "CNY 789.00 in total" in outside[0] and outside[0].endswith("use --scope all).")
    doc = json.loads(run_cli(*ALIYUN_T4, "--format", "json").stdout)
    assert doc["query"]["scope"] == "mainland"
    rec = doc["recommendation"]
    assert region_scope(rec["provider"], rec["region"]) == "mainland"
    assert all(region_scope(o["provider"], o["region"]) == "mainland" for o in doc["options"])
    away = doc["cheaper_outside_scope"]
    assert (away["provider"], away["region"], away["total_cny"]) == ("aliyun", "cn-hongkong", 789)
    assert away["total_cny"] < rec["total_cny"]


def test_t4_quote_with_scope_all_recommends_hong_kong_and_says_nothing_of_outside(run_cli):
    result = run_cli(*ALIYUN_T4, "--scope", "all")
    assert result.exit_code == 0, result.output
    assert "(cn-hongkong)" in recommendation(result.stdout)
    assert "A cheaper option outside" not in result.stdout
    doc = json.loads(run_cli(*ALIYUN_T4, "--scope", "ALL", "--format", "json").stdout)
    assert doc["query"]["scope"] == "all" and doc["cheaper_outside_scope"] is None


def test_fresh_a100_quote_answers_from_the_snapshot_with_three_providers_on_the_mainland(run_cli):
    """What .ci/run asserts on a fresh install: >= 3 providers and from_snapshot, mainland by default."""
    result = run_cli("quote", "--gpu", "A100", "--hours", "500", "--top", "50", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["from_snapshot"] is True
    assert len({o["provider"] for o in doc["options"]}) >= 3
    assert all(region_scope(o["provider"], o["region"]) == "mainland" for o in doc["options"])


# --- mainland by default, on a small seeded database ---


def test_quote_leaves_hong_kong_out_and_names_it_in_one_line(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER)
    result = run_cli("quote", "--gpu", "T4", "--hours", "100")
    assert result.exit_code == 0, result.output
    assert "(cn-hangzhou)" in recommendation(result.stdout)
    table_rows = [line for line in result.stdout.splitlines() if line.lstrip()[:2] in ("1 ", "2 ")]
    assert len(table_rows) == 1 and "cn-hongkong" not in table_rows[0]
    outside = line_of(result.stdout, "A cheaper option outside")
    assert all(f in outside for f in ("aliyun cn-hongkong", "ecs.gn6i-c4g1.xlarge", "on_demand")), outside


def test_no_outside_line_when_the_mainland_is_cheaper(run_cli, tmp_path):
    rows = [dict(HK_CHEAPER[0], price="20"), HK_CHEAPER[1]]
    load(run_cli, tmp_path, rows)
    result = run_cli("quote", "--gpu", "T4", "--hours", "100")
    assert "A cheaper option outside" not in result.stdout
    doc = json.loads(run_cli("quote", "--gpu", "T4", "--hours", "100", "--format", "json").stdout)
    assert doc["cheaper_outside_scope"] is None


def test_only_hong_kong_prices_still_name_the_option_outside(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER[:1])
    result = run_cli("quote", "--gpu", "T4", "--hours", "100")
    assert result.exit_code == 1, result.output  # nothing to recommend in the scope asked about
    assert "No prices match" in result.stdout
    assert "aliyun cn-hongkong" in line_of(result.stdout, "A cheaper option outside")


def test_a_region_named_by_the_user_is_quoted_whatever_the_scope(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER)
    result = run_cli("quote", "--gpu", "T4", "--hours", "100", "--region", "cn-hongkong")
    assert result.exit_code == 0, result.output
    assert (
        "(cn-hongkong)" in recommendation(result.stdout) and "A cheaper option outside" not in result.stdout
    )


def test_scope_all_in_the_config_covers_hong_kong(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER)
    (tmp_path / "cwd" / "config.toml").write_text('[quote]\nscope = "all"\n', encoding="utf-8")
    result = run_cli("quote", "--gpu", "T4", "--hours", "100")
    assert "(cn-hongkong)" in recommendation(result.stdout)
    mainland = run_cli("quote", "--gpu", "T4", "--hours", "100", "--scope", "mainland")
    assert "(cn-hangzhou)" in recommendation(mainland.stdout)  # the flag beats the file


def test_a_bad_scope_is_one_error_line_with_a_hint(run_cli, tmp_path):
    result = run_cli("quote", "--gpu", "T4", "--hours", "100", "--scope", "asia")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "'asia' is not one of 'mainland', 'all'" in result.stderr
    (tmp_path / "cwd" / "config.toml").write_text('[quote]\nscope = "mainlnd"\n', encoding="utf-8")
    result = run_cli("quote", "--gpu", "T4", "--hours", "100")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert result.stderr.startswith("Error: ") and "[quote] scope" in result.stderr
    assert "mainland" in result.stderr


def test_plan_covers_the_mainland_and_names_the_cheaper_hong_kong_option(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER)
    args = ("plan", "--params", "1B", "--tokens", "100M", "--task", "lora", "--gpu", "T4")
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert next(line for line in lines if line.startswith("Cheapest:")).count("aliyun") == 1
    outside = [
        line for line in lines if line.startswith("A cheaper option outside the mainland: cn-hongkong, ")
    ]
    assert len(outside) == 1 and outside[0].endswith("use --scope all.")
    doc = json.loads(run_cli(*args, "--format", "json").stdout)
    assert doc["filters"]["scope"] == "mainland"
    assert doc["options"][0]["rental"]["region"] == "cn-hangzhou"
    assert doc["cheaper_outside_scope"]["rental"]["region"] == "cn-hongkong"
    every = json.loads(run_cli(*args, "--scope", "all", "--format", "json").stdout)
    assert every["options"][0]["rental"]["region"] == "cn-hongkong" and every["cheaper_outside_scope"] is None


def test_gpus_value_ranks_the_mainland_and_names_a_model_cheaper_outside(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER)
    result = run_cli("gpus", "--value", "--gpu", "T4")
    assert result.exit_code == 0, result.output
    assert "11.63" in result.stdout
    outside = line_of(result.stdout, "Cheaper outside the mainland:")
    assert "T4-16GB aliyun cn-hongkong" in outside and "CNY 7.89/GPU-h" in outside
    doc = json.loads(run_cli("gpus", "--value", "--format", "json").stdout)
    assert doc["scope"] == "mainland"
    assert [(o["gpu_model"], o["region"]) for o in doc["cheaper_outside_scope"]] == [
        ("T4-16GB", "cn-hongkong")
    ]
    every = json.loads(run_cli("gpus", "--value", "--scope", "all", "--format", "json").stdout)
    t4 = next(r for r in every["ranked"] if r["gpu_model"] == "T4-16GB")
    assert t4["region"] == "cn-hongkong" and every["cheaper_outside_scope"] == []


def test_scope_without_value_is_refused(run_cli):
    result = run_cli("gpus", "--scope", "all")
    assert result.exit_code == 2 and "only to the --value ranking" in result.stderr


# --- age everywhere ---


AGED = [
    price_row(instance_type="FRESH", price="30", observed_at=days_ago(5)),
    price_row(instance_type="OLD", price="20", observed_at=days_ago(OLD_DAYS + 30)),
    price_row(instance_type="STALE", price="10", observed_at=days_ago(STALE_DAYS + 35)),
]


def test_quote_marks_prices_over_90_days_and_warns_on_a_year_old_recommendation(run_cli, tmp_path):
    load(run_cli, tmp_path, AGED)
    result = run_cli("quote", "--gpu", "A100", "--hours", "10")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert "age" in next(line for line in lines if line.lstrip().startswith("#")).split()
    table_rows = [line for line in lines if line.lstrip()[:1].isdigit()]
    rows = {name: line for line in table_rows for name in ("FRESH", "OLD", "STALE") if f" {name} " in line}
    assert "5 d" in rows["FRESH"] and "(old)" not in rows["FRESH"]
    assert f"{OLD_DAYS + 30} d (old)" in rows["OLD"]
    assert f"{STALE_DAYS + 35} d (old)" in rows["STALE"]
    assert f"(old): more than {OLD_DAYS} days" in line_of(result.stdout, "age:")  # the legend
    best = recommendation(result.stdout)
    warning = best.split("Warning:", 1)[1]
    assert "STALE" in best and f"{STALE_DAYS + 35} days old" in warning and days_ago(400) in warning
    doc = json.loads(run_cli("quote", "--gpu", "A100", "--hours", "10", "--format", "json").stdout)
    assert [o["age_days"] for o in doc["options"]] == [STALE_DAYS + 35, OLD_DAYS + 30, 5]


def test_a_recent_recommendation_has_no_warning_and_a_fresh_table_no_legend(run_cli, tmp_path):
    load(run_cli, tmp_path, AGED[:1])
    result = run_cli("quote", "--gpu", "A100", "--hours", "10")
    assert "Warning" not in result.stdout and "(old)" not in result.stdout
    assert "age: days since" not in result.stdout


def test_plan_marks_old_prices_and_warns_on_its_cheapest_line(run_cli, tmp_path):
    load(run_cli, tmp_path, AGED)
    result = run_cli("plan", "--params", "1B", "--tokens", "100M", "--task", "lora", "--gpu", "A100")
    assert result.exit_code == 0, result.output
    cheapest = next(line for line in result.stdout.splitlines() if line.startswith("Cheapest:"))
    assert "STALE" in cheapest and f"{STALE_DAYS + 35} days old" in cheapest.split("Warning:", 1)[1]
    assert f"{STALE_DAYS + 35} d (old)" in result.stdout and "age: days since" in result.stdout


def test_gpus_value_marks_old_prices_and_warns_on_year_old_ones(run_cli, tmp_path):
    load(run_cli, tmp_path, AGED)
    result = run_cli("gpus", "--value", "--gpu", "A100")
    assert result.exit_code == 0, result.output
    row = next(line for line in result.stdout.splitlines() if line.startswith("1 "))
    assert row.endswith(f"{STALE_DAYS + 35} d (old)")
    warning = line_of(result.stdout, "Warning:")
    assert f"over {STALE_DAYS} days old" in warning and f"A100-40GB ({days_ago(400)})" in warning


# --- one header rule ---


def test_imported_prices_are_never_called_the_bundled_snapshot(run_cli, tmp_path):
    load(run_cli, tmp_path, AGED)
    for args, header in (
        (("quote", "--gpu", "A100", "--hours", "10"), f"Prices observed {days_ago(400)} to {days_ago(5)}."),
        # plan and gpus --value show one option per model: its day only
        (
            ("plan", "--params", "1B", "--tokens", "100M", "--task", "lora"),
            f"Prices observed {days_ago(400)}.",
        ),
        (("gpus", "--value", "--gpu", "A100"), f"Prices observed {days_ago(400)}."),
    ):
        result = run_cli(*args)
        assert result.exit_code == 0, result.output
        assert header in result.stdout.splitlines(), args
        assert "bundled snapshot" not in result.stdout, args


@pytest.mark.parametrize("command", ["quote", "plan", "gpus"])
def test_snapshot_header_is_the_same_rule_for_every_command(run_cli, command):
    args = {
        "quote": ("quote", "--gpu", "A100", "--hours", "500"),
        "plan": ("plan", "--params", "7B", "--tokens", "1B", "--task", "lora"),
        "gpus": ("gpus", "--value"),
    }[command]
    result = run_cli(*args)
    header = next(line for line in result.stdout.splitlines() if line.startswith("Prices observed "))
    assert "all from the bundled snapshot" in header and "planner refresh" in header


def offer(days: int, snapshot: bool = False) -> SimpleNamespace:
    observed = dt.datetime.combine(TODAY - dt.timedelta(days=days), dt.time(), dt.UTC)
    return SimpleNamespace(observed_at=observed, age_days=days, from_snapshot=snapshot)


def test_prices_line_counts_the_snapshot_options_only():
    assert prices_line([]) == ""
    assert prices_line([offer(3)]) == f"Prices observed {days_ago(3)}."
    mixed = prices_line([offer(3), offer(100, snapshot=True), offer(200)])
    assert mixed.startswith(f"Prices observed {days_ago(200)} to {days_ago(3)}; 1 of 3 ")  # range, count
    assert "bundled snapshot" in mixed and "planner refresh" in mixed


def test_age_marks_start_after_90_and_365_days():
    assert age_cell(offer(OLD_DAYS)) == "90 d" and age_cell(offer(OLD_DAYS + 1)) == "91 d (old)"
    assert stale_warning(offer(STALE_DAYS)) == ""
    assert stale_warning(offer(STALE_DAYS + 1)).startswith(" Warning: its price is 366 days old")


def test_the_marketplaces_regions_are_mainland():
    assert region_scope("ppio", "c-east-1") == region_scope("ppio", "c-north-1") == "mainland"
    assert (
        region_scope("compshare", "cn-wlcb") == "mainland" and region_scope("compshare", "hk") == "overseas"
    )


def test_a_model_priced_only_in_hong_kong_says_so_in_plan_and_gpus_value(run_cli, tmp_path):
    load(run_cli, tmp_path, HK_CHEAPER[:1] + [price_row(observed_at=days_ago(3))])  # T4 in HK, A100 at home
    plan = run_cli(
        "plan", "--params", "1B", "--tokens", "100M", "--task", "lora", "--gpu", "T4", "--gpu", "A100"
    )
    assert plan.exit_code == 0, plan.output
    assert "T4-16GB" in line_of(plan.stdout, "Priced only outside the mainland:")
    doc = json.loads(
        run_cli("plan", "--params", "1B", "--tokens", "100M", "--task", "lora", "--format", "json").stdout
    )
    assert "T4-16GB" in doc["priced_outside_scope_only"] and "T4-16GB" not in doc["unpriced"]
    value = json.loads(run_cli("gpus", "--value", "--format", "json").stdout)
    t4 = next(n for n in value["not_ranked"] if n["gpu_model"] == "T4-16GB")
    assert all(f in t4["reason"] for f in ("no on_demand price", "mainland", "--scope all")), t4["reason"]
