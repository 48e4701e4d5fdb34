"""``planner report``: dated CSV files that Excel opens safely, built in SQL, on SQLite and PostgreSQL."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from pathlib import Path

import pandas as pd
import pytest

from planner.providers import PROVIDERS
from reports.csvfile import neutralise, neutralised, write_csv
from tests.conftest import price_row
from tests.conftest import write_csv as write_import_csv
from tests.helpers.cli import line_of
from tests.helpers.db_edits import rename_instances

BOM = b"\xef\xbb\xbf"
TABLES = ("prices", "cheapest", "changes", "availability", "health")


def load(run_cli, tmp_path: Path, rows: list[dict[str, object]], name: str = "p.csv") -> None:
    result = run_cli("import", str(write_import_csv(tmp_path / name, rows)))
    assert result.exit_code == 0, result.output


def table_file(out: Path, table: str) -> Path:
    (path,) = out.glob(f"*_{table}.csv")
    return path


def read_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))


def test_report_writes_five_dated_csv_files_each_with_a_bom_and_a_header(run_cli, tmp_path):
    load(
        run_cli,
        tmp_path,
        [
            price_row(),
            price_row(billing="monthly", price="12948"),
            price_row(provider="autodl", region="西北B区", instance_type="A100 专业版", price="6.5"),
        ],
    )
    out = tmp_path / "out"
    result = run_cli("report", "--out", str(out))
    assert result.exit_code == 0, result.output
    day = dt.datetime.now(dt.timezone(dt.timedelta(hours=8))).date().isoformat()
    written = sorted(p.name for p in out.iterdir())
    assert written == sorted(
        [*(f"{day}_{t}.csv" for t in TABLES), f"{day}_cheapest_trend.png", f"{day}_report.html"]
    )
    for table in TABLES:
        raw = table_file(out, table).read_bytes()
        assert raw.startswith(BOM), table
        header = raw[len(BOM) :].split(b"\n", 1)[0].decode()
        assert header.split(",")[0] in ("gpu_model", "since", "provider"), header
    prices = read_rows(table_file(out, "prices"))
    assert [(r["provider"], r["billing"], r["cny_per_gpu_hour"]) for r in prices] == [
        ("autodl", "on_demand", "6.50"),
        ("tencent", "monthly", "17.74"),  # money to 2 places in a file people open
        ("tencent", "on_demand", "28.64"),
    ]
    assert prices[0]["region"] == "西北B区" and prices[0]["instance_type"] == "A100 专业版"
    cheapest = read_rows(table_file(out, "cheapest"))
    assert [(r["gpu_model"], r["provider"], r["offers"], r["providers"]) for r in cheapest] == [
        ("A100-40GB", "autodl", "3", "2")
    ]
    assert f"Report of {day}" in result.stdout and str(out) in result.stdout


def test_formula_text_from_the_database_reaches_the_csv_neutralised(run_cli, db_url, tmp_path):
    load(
        run_cli,
        tmp_path,
        [
            price_row(instance_type="F1"),
            price_row(instance_type="F2", region="ap-shanghai", price="30"),
            price_row(instance_type="F3", region="ap-guangzhou", price="31"),
        ],
    )
    rename_instances(db_url, {"F1": '=HYPERLINK("x")', "F2": "@SUM(A1)", "F3": "-2+3"})
    out = tmp_path / "out"
    assert run_cli("report", "--no-chart", "--out", str(out)).exit_code == 0
    for table in ("prices", "cheapest", "availability"):
        raw = table_file(out, table).read_text(encoding="utf-8-sig")
        assert '=HYPERLINK(""x"")' in raw or table == "cheapest"
        assert ",=HYPERLINK" not in raw and ',"=HYPERLINK' not in raw, table
    types = {r["instance_type"] for r in read_rows(table_file(out, "prices"))}
    assert types == {'\'=HYPERLINK("x")', "'@SUM(A1)", "'-2+3"}
    assert read_rows(table_file(out, "cheapest"))[0]["instance_type"] == '\'=HYPERLINK("x")'


def test_price_changes_since_the_previous_day_and_week_are_numbers_even_when_negative(run_cli, tmp_path):
    day = dt.date(2026, 11, 20)

    def on(days_before: int, price: str, **kw: object) -> dict[str, object]:
        return price_row(observed_at=(day - dt.timedelta(days=days_before)).isoformat(), price=price, **kw)

    load(
        run_cli,
        tmp_path,
        [
            on(7, "30"),
            on(1, "30"),
            on(0, "27"),  # -10 % on the day and on the week
            on(8, "20", region="ap-shanghai"),
            on(0, "22", region="ap-shanghai"),  # +10 % on the week (day 8 is within the week's slack)
            on(1, "40", region="ap-guangzhou"),
            on(0, "40", region="ap-guangzhou"),  # unchanged: not listed
            on(4, "50", region="ap-chengdu"),
            on(0, "55", region="ap-chengdu"),  # 4 days back: neither the previous day nor the week
        ],
    )
    out = tmp_path / "out"
    assert run_cli("report", "--no-chart", "--out", str(out)).exit_code == 0
    path = table_file(out, "changes")
    rows = [
        (r["since"], r["region"], r["old_on"], r["old_price"], r["new_price"], r["change_pct"])
        for r in read_rows(path)
    ]
    assert rows == [
        ("day", "ap-beijing", "2026-11-19", "30.00", "27.00", "-10.00"),
        ("week", "ap-beijing", "2026-11-13", "30.00", "27.00", "-10.00"),
        ("week", "ap-shanghai", "2026-11-12", "20.00", "22.00", "10.00"),
    ]
    raw = path.read_text(encoding="utf-8-sig")
    assert ",-10.00," in raw and "'-10" not in raw  # a negative number stays a number
    frame = pd.read_csv(path, encoding="utf-8-sig")
    assert frame["change_pct"].dtype.kind == "f" or frame["change_pct"].dtype.kind == "i"


def test_changes_are_read_by_index_seeks(engine):
    """Each series' level on a day is one seek on the (instance, billing, day) unique index."""
    if engine.url.get_backend_name() != "sqlite":
        pytest.skip("the plan is checked on SQLite; PostgreSQL plans depend on table statistics")
    from db.queries import latest_rows, wanted_instances
    from db.schema import prices

    held = latest_rows(prices, "observed_on", wanted_instances(None, None), below=dt.date(2026, 11, 21))
    statement = held.select()
    compiled = statement.compile(engine, compile_kwargs={"literal_binds": True})
    with engine.connect() as conn:
        plan = " | ".join(row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}"))
    assert "sqlite_autoindex_prices_1 (instance_id=? AND billing=? AND observed_on" in plan, plan
    assert "SCAN prices" not in plan and "SCAN latest_t " not in plan, plan


def test_health_shows_the_last_refresh_of_each_provider(run_cli, engine, tmp_path):
    from db import store

    with engine.begin() as conn:
        ok = store.start_run(conn, provider="aliyun", kind="refresh")
        store.finish_run(conn, ok, "ok", offers_seen=10, prices_stored=8)
        failed = store.start_run(conn, provider="aliyun", kind="refresh")
        store.finish_run(conn, failed, "failed", error="=cmd|' /C calc'!A0\nsecond line")
        tencent = store.start_run(conn, provider="tencent", kind="refresh")
        store.finish_run(conn, tencent, "ok", offers_seen=3, prices_stored=3)
    load(run_cli, tmp_path, [price_row()])
    out = tmp_path / "out"
    result = run_cli("report", "--no-chart", "--out", str(out))
    assert result.exit_code == 0, result.output
    health = {r["provider"]: r for r in read_rows(table_file(out, "health"))}
    assert list(health) == list(PROVIDERS)  # the marketplaces off by default included
    assert health["aliyun"]["status"] == "failed"
    assert health["aliyun"]["error"].startswith("'=cmd")
    assert health["tencent"]["status"] == "ok" and health["tencent"]["offers_seen"] == "3"
    assert health["autodl"]["status"] == "never"
    failed = line_of(result.stdout, "Last refresh did not succeed for:").split(":", 1)[1]
    assert failed.split(" (")[0].strip() == "aliyun"  # the failed providers, and only they

    only = tmp_path / "only"
    assert run_cli("report", "--no-chart", "--out", str(only), "--provider", "Tencent").exit_code == 0
    assert [r["provider"] for r in read_rows(table_file(only, "health"))] == ["tencent"]


def test_availability_is_unknown_where_nothing_is_recorded_and_read_where_it_is(run_cli, engine, tmp_path):
    from db import schema

    load(run_cli, tmp_path, [price_row(), price_row(region="ap-shanghai", price="29")])
    table = getattr(schema, "availability", None)
    if table is not None:
        from sqlalchemy import insert, select

        with engine.begin() as conn:
            iid = conn.execute(
                select(schema.instances.c.id).where(schema.instances.c.region == "ap-shanghai")
            ).scalar_one()
            run = conn.execute(select(schema.prices.c.run_id)).scalars().first()
            observed = dt.datetime(2026, 11, 1, 8)
            conn.execute(
                insert(table),
                [
                    {
                        "instance_id": iid,
                        "billing": "on_demand",
                        "run_id": run,
                        "observed_at": observed,
                        "observed_on": observed.date(),
                        "stock_status": None,
                        "idle_gpus": 0,
                        "total_gpus": 8,
                    }
                ],
            )
    out = tmp_path / "out"
    assert run_cli("report", "--no-chart", "--out", str(out)).exit_code == 0
    rows = {r["region"]: r for r in read_rows(table_file(out, "availability"))}
    assert rows["ap-beijing"]["stock_status"] == "unknown" and rows["ap-beijing"]["idle_gpus"] == ""
    if table is not None:
        assert (rows["ap-shanghai"]["stock_status"], rows["ap-shanghai"]["idle_gpus"]) == ("sold_out", "0")
        assert rows["ap-shanghai"]["total_gpus"] == "8"
        assert rows["ap-shanghai"]["max_idle_gpus_per_machine"] == ""  # not stated: not a marketplace


def test_default_folder_filters_and_json(run_cli, tmp_path, isolated_home):
    load(
        run_cli,
        tmp_path,
        [
            price_row(),
            price_row(provider="aliyun", region="cn-beijing", instance_type="ecs.gn7", gpu_model="H800"),
        ],
    )
    result = run_cli("report", "--gpu", "A100", "--provider", "tencent", "--format", "json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.stdout)
    default = isolated_home / "planner-data" / "reports"
    assert doc["out_dir"] == str(default)
    names = [Path(f["path"]).name for f in doc["files"]]
    scope = f"{doc['day']}_A100-40GB+A100-80GB_tencent"
    assert names == [
        *(f"{scope}_{t}.csv" for t in TABLES),
        f"{scope}_report.html",
        f"{scope}_cheapest_trend.png",
    ]
    assert {f["table"]: f["rows"] for f in doc["files"]}["prices"] == 1
    assert all(Path(f["path"]).parent == default for f in doc["files"])

    configured = tmp_path / "team.toml"
    configured.write_text(f'[report]\nout_dir = "{tmp_path / "configured"}"\n')
    assert run_cli("--config", str(configured), "report").exit_code == 0
    assert len(list((tmp_path / "configured").glob("*.csv"))) == 5


def test_an_empty_database_reports_the_bundled_snapshot(run_cli, tmp_path):
    out = tmp_path / "out"
    result = run_cli("report", "--no-chart", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "loaded the bundled snapshot" in result.stderr
    prices = read_rows(table_file(out, "prices"))
    assert len(prices) > 100 and all(r["from_snapshot"] == "true" for r in prices)


def test_bad_filters_are_one_line_errors(run_cli, tmp_path):
    result = run_cli("report", "--out", str(tmp_path / "o"), "--gpu", "A1OO")
    assert result.exit_code == 2 and "Traceback" not in result.output
    result = run_cli("report", "--out", str(tmp_path / "o"), "--provider", "alyun")
    assert result.exit_code == 2 and "aliyun" in result.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('=HYPERLINK("x")', '\'=HYPERLINK("x")'),
        ("+1", "'+1"),
        ("-5", "'-5"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tcmd", "'\tcmd"),
        ("\rcmd", "'\rcmd"),
        ("a=b", "a=b"),
        ("", ""),
        (-5.0, -5.0),
        (3, 3),
        (None, None),
    ],
)
def test_neutralise(value, expected):
    assert neutralise(value) == expected


def test_number_columns_are_left_alone_and_written_as_numbers(tmp_path):
    frame = pd.DataFrame(
        {"name": ["-x", "ok"], "pct": [-12.5, 3.0], "n": pd.array([None, -2], dtype="Int64")}
    )
    assert neutralised(frame)["name"].tolist() == ["'-x", "ok"]
    path = write_csv(frame, tmp_path / "f.csv")
    assert path.read_bytes() == BOM + b"name,pct,n\n'-x,-12.50,\nok,3.00,-2\n"  # a percentage: 2 places
    assert not list(tmp_path.glob(".*tmp"))


def test_file_names_are_ours_even_for_odd_filter_names():
    from reports.build import Report

    report = Report(
        day=dt.date(2026, 12, 1),
        as_of=None,
        generated_at=dt.datetime(2026, 12, 1),
        tables={},
        gpu_models=("../../etc/passwd", "A100-80GB"),
        providers=("a b",),
    )
    name = report.file_name("prices")
    assert "/" not in name and " " not in name and name.startswith("2026-12-01_")
    assert name == "2026-12-01_etc-passwd+A100-80GB_a-b_prices.csv"
    long = Report(dt.date(2026, 12, 1), None, dt.datetime(2026, 12, 1), {}, gpu_models=("A" * 80,))
    assert long.file_name("health").startswith("2026-12-01_filtered-") and len(long.file_name("health")) < 50
