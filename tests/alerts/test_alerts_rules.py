"""Alert rules and channels in the config: the documented shape is read; every mistake is one line
naming the rule and the key; conditions judged as documented; the schedule's alert hooks."""

from __future__ import annotations

import datetime as dt
import logging
from decimal import Decimal

import pytest

from planner.alerts.conditions import reason
from planner.alerts.offers import AlertOffer
from planner.alerts.rules import load_channels, load_rules
from planner.config import load_config
from planner.errors import ConfigError, UsageError
from planner.pricing.cost import Offer, Stock
from tests.helpers.cli import line_of

CHANNELS = '\n[channels.team]\nkind = "wecom"\n'


def rules_of(tmp_path, text: str):
    path = tmp_path / "c.toml"
    path.write_text(text, encoding="utf-8")
    return load_rules(load_config(path, env={}, cwd=tmp_path))


def test_the_documented_shape_is_read(tmp_path):
    rules = rules_of(
        tmp_path,
        '[[alerts]]\nname = "cheap-h800"\ngpu = "H800"\nprovider = "AutoDL"\nbilling = "payg"\n'
        'below_cny_per_gpu_hour = 9.0\nchannels = ["team"]\n'
        '[[alerts]]\nname = "drop"\ngpu = "4090"\ndrop_percent = 10\n'
        '[[alerts]]\nname = "new"\nnew_offers = true\n' + CHANNELS,
    )
    cheap, drop, new = rules
    assert cheap.gpu_models == ("H800-80GB",) and cheap.provider == "autodl" and cheap.billing == "on_demand"
    assert cheap.below_cny_per_gpu_hour == Decimal("9.0") and cheap.channels == ("team",)
    assert cheap.describe() == "H800 autodl on_demand under 9 CNY/GPU-h"
    assert drop.gpu_models == ("RTX4090-24GB",)  # no China variant unless named
    assert drop.window_days == 7 and drop.channels == ()
    assert new.gpu_models == () and new.describe() == "any GPU: new offers"


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        ('name = "a"\ngpu = "H800"', "alert 'a': needs exactly one condition (it has none)"),
        (
            'name = "a"\ngpu = "H800"\nnew_offers = true\nback_in_stock = true',
            "alert 'a': needs exactly one condition (it has back_in_stock, new_offers)",
        ),
        ('name = "a"\ngpu = "H900"\nnew_offers = true', "alert 'a': gpu 'H900': unknown GPU 'H900'"),
        ('name = "a"\ngpu = "H800"\nprovider = "aliyn"\nnew_offers = true', "alert 'a': provider 'aliyn'"),
        (
            'name = "a"\ngpu = "H800"\nbillling = "payg"\nnew_offers = true',
            "alert 'a': unknown key 'billling'",
        ),
        (
            'name = "a"\ngpu = "H800"\nbelow_cny_per_gpu_hour = -1',
            "alert 'a': below_cny_per_gpu_hour must be in",
        ),
        (
            'name = "a"\ngpu = "H800"\nbelow_cny_per_gpu_hour = "9"',
            "alert 'a': below_cny_per_gpu_hour must be a number",
        ),
        ('name = "a"\ngpu = "H800"\ndrop_percent = 120', "alert 'a': drop_percent must be in (0, 100)"),
        ('name = "a"\ngpu = "H800"\ndrop_percent = 5\nwindow_days = 0', "alert 'a': window_days must be in"),
        (
            'name = "a"\ngpu = "H800"\nidle_gpus_at_least = 2.5',
            "alert 'a': idle_gpus_at_least must be a whole number",
        ),
        ('name = "a"\ngpu = "H800"\nnew_offers = false', "alert 'a': new_offers must be true"),
        (
            'name = "a"\ngpu = "H800"\nnew_offers = true\nwindow_days = 3',
            "alert 'a': window_days goes with drop_percent only",
        ),
        (
            'name = "a"\ngpu = "H800"\nnew_offers = true\nchannels = ["tema"]',
            "alert 'a': channels names 'tema'",
        ),
        ('gpu = "H800"\nnew_offers = true', "alert #1: name is missing"),
    ],
)
def test_a_bad_rule_is_one_line_naming_the_rule_and_the_key(tmp_path, rule, message):
    with pytest.raises(ConfigError) as err:
        rules_of(tmp_path, f"[[alerts]]\n{rule}\n{CHANNELS}")
    assert err.value.message.startswith(message), err.value.message
    assert "\n" not in err.value.message


def test_duplicate_names_and_bad_channels_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="alert 'a': name is used twice"):
        rules_of(
            tmp_path, '[[alerts]]\nname = "a"\nnew_offers = true\n[[alerts]]\nname = "a"\nnew_offers = true\n'
        )
    path = tmp_path / "ch.toml"
    path.write_text('[channels.team]\nkind = "feishuu"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_channels(load_config(path, env={}, cwd=tmp_path))
    assert err.value.message.startswith("channel 'team': kind ")
    assert "wecom, dingtalk, feishu, email" in err.value.message  # the kinds there are
    assert err.value.hint == "did you mean 'feishu'?"


def test_the_cli_prints_a_bad_rule_as_error_and_hint_with_exit_2(run_cli, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(f'[[alerts]]\nname = "cheap"\ngpu = "H800"\nbelow_cny = 9\n{CHANNELS}', encoding="utf-8")
    for args in (["alerts", "check"], ["alerts", "list"], ["refresh", "--from-raw", str(tmp_path)]):
        result = run_cli("--config", str(path), *args)
        assert result.exit_code == 2, (args, result.output)
        error, hint = result.stderr.splitlines()[:2]
        assert error.startswith("Error: alert 'cheap': ") and "unknown key 'below_cny'" in error
        assert hint.startswith("Hint: ") and "'below_cny_per_gpu_hour'?" in hint
        assert "Traceback" not in result.output


def test_alerts_test_names_an_unknown_channel(run_cli, tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(CHANNELS, encoding="utf-8")
    result = run_cli("--config", str(path), "alerts", "test", "tem")
    assert result.exit_code == 2 and "Error: unknown channel 'tem'" in result.stderr
    assert "did you mean team?" in result.stderr
    far = run_cli("--config", str(path), "alerts", "test", "zzzzzz")
    assert far.exit_code == 2 and "Hint: did you mean" in far.stderr  # every configured name
    bare = run_cli("alerts", "test", "team")  # no channels at all: say how to add one
    assert bare.exit_code == 2 and "no channels are configured" in bare.stderr
    assert "Hint: add a [channels.NAME] section" in bare.stderr


def offer(**kw) -> AlertOffer:
    """An alert's view of one pricing-core offer, from flat fields (``rentable_gpus``: AutoDL's
    orderable GPUs; any stock field makes a stock record)."""
    stock_keys = ("stock_status", "idle_gpus", "total_gpus", "rentable_gpus", "most_idle", "most_orderable")
    stock_fields = {k: kw.pop(k) for k in stock_keys if k in kw}
    extras = {k: kw.pop(k) for k in ("previous_stock_status", "median_cny_per_gpu_hour", "is_new") if k in kw}
    base = dict(
        instance_id=1,
        provider="autodl",
        region="west-B",
        instance_type="H20-NVLink",
        gpu_model="H20-96GB",
        gpus_per_instance=1.0,
        billing="on_demand",
        unit_price=kw.pop("cny_per_gpu_hour", Decimal("6.98")),
        unit="hour",
        currency="CNY",
        cny_per_currency=Decimal(1),
        observed_at=dt.datetime(2026, 12, 2),
        source=None,
        from_snapshot=False,
    )
    stock = None
    if stock_fields:
        stock = Stock(
            stock_fields.get("stock_status"),
            stock_fields.get("idle_gpus"),
            stock_fields.get("total_gpus"),
            dt.datetime(2026, 12, 2),
            stock_fields.get("rentable_gpus"),
            stock_fields.get("most_idle"),
            stock_fields.get("most_orderable"),
        )
    assert not kw, kw
    return AlertOffer(Offer(**base, stock=stock), **extras)


def test_conditions_are_judged_as_documented(tmp_path):
    below, drop, idle, back, new = rules_of(
        tmp_path,
        '[[alerts]]\nname = "b"\ngpu = "H20"\nbelow_cny_per_gpu_hour = 7\n'
        '[[alerts]]\nname = "d"\ngpu = "H20"\ndrop_percent = 10\n'
        '[[alerts]]\nname = "i"\ngpu = "H20"\nidle_gpus_at_least = 8\n'
        '[[alerts]]\nname = "s"\ngpu = "H20"\nback_in_stock = true\n'
        '[[alerts]]\nname = "n"\ngpu = "H20"\nnew_offers = true\n',
    )
    assert reason(below, offer()) == "6.98 CNY/GPU-h, under 7"
    assert reason(below, offer(cny_per_gpu_hour=Decimal("7"))) is None  # under, not at
    assert reason(drop, offer(median_cny_per_gpu_hour=Decimal("7.80"))) is not None  # 10.5% under
    assert reason(drop, offer(median_cny_per_gpu_hour=Decimal("7.70"))) is None  # 9.4%
    assert reason(drop, offer()) is None  # no history: no drop
    assert reason(idle, offer(idle_gpus=8, rentable_gpus=8, total_gpus=48)) == "8 GPUs idle (at least 8)"
    assert reason(idle, offer(idle_gpus=7, rentable_gpus=7, total_gpus=48)) is None
    assert reason(idle, offer(idle_gpus=9, rentable_gpus=0, total_gpus=48)) is None  # idle, no order taken
    assert reason(idle, offer(idle_gpus=8, rentable_gpus=8, stock_status="sold_out")) is None
    assert (
        reason(back, offer(previous_stock_status="sold_out", idle_gpus=4, rentable_gpus=4, total_gpus=48))
        is not None
    )
    assert reason(back, offer(previous_stock_status="sold_out", stock_status="sold_out")) is None
    assert reason(back, offer(previous_stock_status="available", stock_status="available")) is None
    assert reason(new, offer(is_new=True)) == "new at autodl: H20-96GB as H20-NVLink"
    assert reason(new, offer()) is None


def test_idle_gpus_at_least_counts_the_pool_and_says_how_many_sit_on_one_machine(tmp_path):
    """The rule counts AutoDL's idle GPUs summed over the machines of the region (docs/alerts.md: not per
    machine); where the market states the most on one machine, the message says it, so nobody reads
    40 idle as 8 on one machine."""
    (idle,) = rules_of(tmp_path, '[[alerts]]\nname = "i"\ngpu = "H20"\nidle_gpus_at_least = 8\n')
    spread = offer(idle_gpus=40, rentable_gpus=40, total_gpus=480, most_idle=2, most_orderable=2)
    said = reason(idle, spread)
    assert said.startswith("40 GPUs idle (at least 8)") and said.endswith("at most 2 on one machine")
    assert spread.stock_text() == "40/480 idle, at most 2 on one machine"
    assert spread.to_dict()["max_idle_gpus_per_machine"] == 2
    assert reason(idle, offer(idle_gpus=40, rentable_gpus=40, total_gpus=480)) == "40 GPUs idle (at least 8)"


def test_stock_every_takes_a_duration_of_at_least_ten_minutes():
    from planner.ops.scheduler import every_seconds

    assert every_seconds("") is None
    assert every_seconds("1h") == 3600 and every_seconds("30m") == 1800 and every_seconds("2 hours") == 7200
    for bad in ("1d", "5m", "hourly", "0h"):
        with pytest.raises(UsageError, match="stock_every"):
            every_seconds(bad)


def test_schedule_refuses_a_bad_stock_every_at_start(run_cli, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[schedule]\nstock_every = "every hour"\n', encoding="utf-8")
    result = run_cli("--config", str(path), "schedule", "--list")
    assert result.exit_code == 2
    error = line_of(result.stderr, "Error:")
    assert "[schedule] stock_every 'every hour'" in error and "not a duration" in error
    path.write_text(
        '[schedule]\nstock_every = "1h"\nreport_channels = ["team"]\n' + CHANNELS, encoding="utf-8"
    )
    listed = run_cli("--config", str(path), "schedule", "--list")
    assert listed.exit_code == 0, listed.output
    stock = next(line for line in listed.stdout.splitlines() if "every 1h" in line)
    assert stock.split()[0] == "stock" and "[schedule] stock_every" in stock
    assert "The stock job refreshes autodl" in listed.stdout
    assert any(line.split() == ["alerts", "after", "each", "refresh"] for line in listed.stdout.splitlines())
    assert "summary also goes to: team" in listed.stdout


def test_the_stock_job_refreshes_the_chosen_providers_under_the_lock_then_checks_alerts(
    tmp_path, db_url, monkeypatch, caplog
):
    from planner.app import App
    from planner.ingest import refresh as refresh_module
    from planner.ingest.lock import refresh_lock
    from planner.ops import scheduler as schedule

    path = tmp_path / "s.toml"
    path.write_text('[schedule]\nstock_providers = ["AutoDL"]\n', encoding="utf-8")
    app = App(config_file=str(path), db_url=db_url)
    calls: list[object] = []

    def fake_refresh(engine, config, providers, **kw):
        calls.append(providers)
        return refresh_module.RefreshSummary(())

    monkeypatch.setattr(refresh_module, "run_refresh", fake_refresh)
    monkeypatch.setattr("planner.alerts.check.after_refresh", lambda *a: calls.append("alerts"))
    assert schedule.run_stock_job(app) == 0
    assert calls == [["autodl"], "alerts"]
    with refresh_lock(app.engine(), holder="someone else"), caplog.at_level(logging.WARNING):
        assert schedule.run_stock_job(app) == 75
    assert "skipping this stock run" in caplog.text and len(calls) == 2


def test_the_stock_job_is_added_beside_the_nightly_one():
    from planner.ops.scheduler import add_stock_job, crontab_trigger, make_scheduler

    scheduler, _ = make_scheduler(
        crontab_trigger("0 2 * * *", "Asia/Shanghai"), "Asia/Shanghai", 60, lambda: 0
    )
    job = add_stock_job(scheduler, 3600, lambda: 0)
    assert job.id == "stock-refresh" and job.trigger.interval == dt.timedelta(hours=1)
    assert {j.id for j in scheduler.get_jobs()} == {"refresh-and-report", "stock-refresh"}


def test_alert_offers_are_the_pricing_cores_spot_only_when_the_rule_names_it(engine, tmp_path):
    from planner.alerts.offers import current_offers
    from planner.ingest.importer import import_csv
    from tests.conftest import price_row, write_csv

    fx = load_config(env={}).section("fx")
    rows = [
        price_row(instance_type="H20-A", gpu_model="H20-96GB", price="9.50"),
        price_row(instance_type="H20-A", gpu_model="H20-96GB", billing="spot", price="3.10"),
    ]
    import_csv(engine, write_csv(tmp_path / "p.csv", rows), fx)
    any_mode, spot = rules_of(
        tmp_path,
        '[[alerts]]\nname = "a"\ngpu = "H20"\nbelow_cny_per_gpu_hour = 10\n'
        '[[alerts]]\nname = "s"\ngpu = "H20"\nbilling = "spot"\nbelow_cny_per_gpu_hour = 10\n',
    )
    with engine.connect() as conn:
        plain_offers = current_offers(conn, any_mode, fx)
        spot_offers = current_offers(conn, spot, fx)
    assert [(o.offer.billing, o.cny_per_gpu_hour) for o in plain_offers] == [("on_demand", Decimal("9.50"))]
    assert [o.offer.billing for o in spot_offers] == ["spot"]
    assert plain_offers[0].to_dict()["stock_state"] == "unknown"  # pricing.availability's word for it
