"""The report's chart: each day's cheapest on-demand CNY per GPU-hour per GPU model, its PNG, its place
in the command's output and inline in the e-mail, and what happens when it cannot be drawn."""

from __future__ import annotations

import datetime as dt
import errno
import json
import sys
from pathlib import Path

import pytest

from reports.build import build_report
from reports.chart import select_trend, write_chart
from tests.conftest import price_row, write_csv
from tests.helpers.cli import line_of, loaded
from tests.helpers.png import png_size
from tests.helpers.schedule import fake_refresh, schedule_config
from tests.helpers.smtp import Recorder, email_config, parse, smtp_server

DAY = dt.date(2026, 11, 20)  # the newest price: the chart's window is the 30 days to it
REPORT_DAY = dt.date(2026, 11, 21)


def on(days_before: int, price: str, **kw: object) -> dict[str, object]:
    return price_row(observed_at=(DAY - dt.timedelta(days=days_before)).isoformat(), price=price, **kw)


AUTODL = {"provider": "autodl", "region": "west-A", "instance_type": "A100 专业版"}
H800 = {"provider": "aliyun", "region": "cn-beijing", "instance_type": "ecs.gn8", "gpu_model": "H800-80GB"}
L20 = {"instance_type": "GN10L", "gpu_model": "L20-48GB"}
ROWS = [
    on(30, "10", region="ap-guangzhou"),  # 30 days before the newest price: outside the window
    on(29, "29", region="ap-shanghai"),  # the window's first day
    on(2, "30"),
    on(1, "30"),
    on(0, "27"),
    on(2, "25", **AUTODL),  # the cheapest on its day, at another provider
    on(1, "31", **AUTODL),
    on(0, "26", **AUTODL),
    on(0, "5", billing="spot"),  # cheaper, but not on demand: not in the chart
    on(0, "12948", billing="monthly"),  # 17.74 per GPU-hour over 730 h: not on demand either
    on(1, "400", gpu_count=8, **H800),  # 8 GPUs: 50 per GPU-hour
    on(0, "360", gpu_count=8, **H800),
    on(0, "14", **L20),
]


def load(run_cli, tmp_path: Path, rows: list[dict[str, object]]) -> None:
    result = run_cli("import", str(write_csv(tmp_path / "p.csv", rows)))
    assert result.exit_code == 0, result.output


def mailed(run_cli, tmp_path: Path, *args: str, chart_setting: bool = True):  # noqa: ANN001, ANN201
    """``planner report --out OUT --email a@x.org ARGS`` to a loopback SMTP server, with ``[report]
    chart = chart_setting``: the result, the message received (parsed) and OUT."""
    handler = Recorder()
    out = tmp_path / "out"
    out.mkdir()  # an existing folder: standard error holds only what the test is about
    with smtp_server(handler) as port:
        config = email_config(tmp_path, port, chart=chart_setting)
        result = run_cli("--config", str(config), "report", "--out", str(out), "--email", "a@x.org", *args)
    assert result.exit_code == 0, result.output
    (received,) = handler.messages
    return result, parse(received[2]), out


def daily(report) -> list[tuple[str, dt.date, float, int]]:  # noqa: ANN001 - reports.build.Report
    return [
        (r.gpu_model, r.day.date(), r.cny_per_gpu_hour, r.offers)
        for r in report.trend.itertuples(index=False)
    ]


def ago(n: int) -> dt.date:
    return DAY - dt.timedelta(days=n)


def test_the_chart_data_is_each_models_cheapest_on_demand_price_per_day(run_cli, engine, tmp_path):
    load(run_cli, tmp_path, ROWS)
    report = build_report(engine, REPORT_DAY)
    assert report.as_of == DAY
    assert daily(report) == [
        ("A100-40GB", ago(29), 29.0, 1),
        ("A100-40GB", ago(2), 25.0, 2),
        ("A100-40GB", ago(1), 30.0, 2),
        ("A100-40GB", ago(0), 26.0, 2),
        ("H800-80GB", ago(1), 50.0, 1),
        ("H800-80GB", ago(0), 45.0, 1),
        ("L20-48GB", ago(0), 14.0, 1),
    ]
    trend = select_trend(report)
    assert trend is not None and trend.left_out == 0
    assert (trend.first_day, trend.last_day, trend.single_day) == (ago(29), DAY, False)
    # Dearest latest price first, as the legend reads.
    assert trend.models == ("H800-80GB", "A100-40GB", "L20-48GB")
    h800 = trend.lines[0]
    assert (h800.days, h800.cny_per_gpu_hour) == ((ago(1), ago(0)), (50.0, 45.0))
    assert h800.change == pytest.approx(-0.1)


def test_the_lines_are_the_models_with_the_most_offers_then_the_cheapest(run_cli, engine, tmp_path):
    load(run_cli, tmp_path, ROWS)
    report = build_report(engine, REPORT_DAY)
    offers = dict(
        zip(report.tables["cheapest"]["gpu_model"], report.tables["cheapest"]["offers"], strict=True)
    )
    assert offers == {"A100-40GB": 6, "H800-80GB": 1, "L20-48GB": 1}
    trend = select_trend(report, max_lines=2)
    # A100-40GB has the most offers; H800 and L20 one each, and L20 is cheaper.
    assert trend is not None and trend.models == ("A100-40GB", "L20-48GB") and trend.left_out == 1
    assert select_trend(report, max_lines=1).models == ("A100-40GB",)


def test_the_reports_filters_apply_to_the_chart(run_cli, engine, tmp_path):
    load(run_cli, tmp_path, ROWS)
    tencent = build_report(engine, REPORT_DAY, providers=["tencent"])
    assert daily(tencent) == [
        ("A100-40GB", ago(29), 29.0, 1),
        ("A100-40GB", ago(2), 30.0, 1),  # AutoDL's 25 is filtered out
        ("A100-40GB", ago(1), 30.0, 1),
        ("A100-40GB", ago(0), 27.0, 1),
        ("L20-48GB", ago(0), 14.0, 1),
    ]
    h800 = build_report(engine, REPORT_DAY, gpu_models=["H800-80GB"])
    assert daily(h800) == [("H800-80GB", ago(1), 50.0, 1), ("H800-80GB", ago(0), 45.0, 1)]
    assert select_trend(h800).models == ("H800-80GB",)


def test_the_chart_is_read_on_an_index(engine):
    if engine.url.get_backend_name() != "sqlite":
        pytest.skip("the plan is checked on SQLite; PostgreSQL plans depend on table statistics")
    from db.queries import levels_from_statement, wanted_instances

    def plan(*filters: object) -> str:
        wanted = wanted_instances(*filters) if filters else wanted_instances(None, None)
        statement = levels_from_statement(wanted, DAY - dt.timedelta(days=29), ["on_demand"])
        compiled = statement.compile(engine, compile_kwargs={"literal_binds": True})
        with engine.connect() as conn:
            return " | ".join(row[-1] for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {compiled}"))

    unfiltered = plan()
    assert "SEARCH prices USING INDEX" in unfiltered and "SCAN prices" not in unfiltered, unfiltered
    filtered = plan(["A100-40GB"], ["tencent"])  # the wanted instances' rows, by (instance, billing, day)
    assert "SEARCH prices USING INDEX" in filtered and "SCAN prices" not in filtered, filtered


def test_report_draws_the_png_beside_the_csv_files_and_lists_it(run_cli, tmp_path):
    load(run_cli, tmp_path, ROWS)
    out = tmp_path / "out"
    result = run_cli("report", "--out", str(out))
    assert result.exit_code == 0, result.output
    (png,) = out.glob("*.png")
    day = png.name[:10]
    assert png.name == f"{day}_cheapest_trend.png" and len(list(out.glob(f"{day}_*.csv"))) == 5
    assert png_size(png) == (960, 480)
    assert png.stat().st_size > 15_000  # lines, labels and a legend, not an empty canvas
    assert not list(out.glob(".*"))  # no temporary file left
    line = next(line for line in result.stdout.splitlines() if png.name in line)
    assert line.split()[1] == "7"  # the points drawn: 4 + 2 + 1
    assert "of 3 GPU model(s)" in line
    assert result.stderr == f"Created the folder {out} for the report.\n"  # nothing else

    doc = json.loads(run_cli("report", "--out", str(out), "--format", "json").stdout)
    assert doc["files"][-1] == {"table": "cheapest_trend", "path": str(png), "rows": 7}
    assert [f["table"] for f in doc["files"][:5]] == [
        "prices",
        "cheapest",
        "changes",
        "availability",
        "health",
    ]
    assert doc["chart_note"] is None

    filtered = json.loads(
        run_cli("report", "--out", str(out), "--provider", "aliyun", "--format", "json").stdout
    )
    assert Path(filtered["files"][-1]["path"]).name == f"{day}_aliyun_cheapest_trend.png"
    assert filtered["files"][-1]["rows"] == 2


def test_the_email_shows_the_chart_inline_and_still_attaches_the_csv_files(run_cli, tmp_path):
    load(run_cli, tmp_path, ROWS)
    _, message, out = mailed(run_cli, tmp_path)
    assert message.get_content_type() == "multipart/mixed"
    related = message.get_body(("related",))
    assert related is not None and related.get_content_type() == "multipart/related"
    html_part, image = related.get_payload()
    assert html_part.get_content_type() == "text/html" and image.get_content_type() == "image/png"
    cid = image["Content-ID"]
    assert cid.startswith("<") and cid.endswith(">")
    html = html_part.get_content()
    assert f'<img src="cid:{cid[1:-1]}"' in html
    assert 'alt="Line chart: ' in html  # a text alternative for the image
    assert "H800-80GB 50.00 to 45.00" in html
    (png,) = out.glob("*.png")
    assert image.get_payload(decode=True) == png.read_bytes()
    assert image.get_content_disposition() == "inline"

    attachments = list(message.iter_attachments())
    assert [a.get_content_type() for a in attachments] == ["text/csv"] * 5 + ["text/html"]  # + the page
    assert sorted(a.get_filename() for a in attachments) == sorted(p.name for p in out.glob("*.[ch]*"))

    text = message.get_body(("plain",)).get_content()
    assert "HTML version" in text and png.name in text
    h800 = next(line for line in text.splitlines() if "H800-80GB" in line and "->" in line)
    assert h800.split() == ["H800-80GB", "50.00", "->", "45.00", "CNY/GPU-h", "-10.0%"]


@pytest.mark.parametrize("how", ["config", "flag"])
def test_the_chart_can_be_turned_off(run_cli, tmp_path, how):
    load(run_cli, tmp_path, ROWS)
    if how == "config":
        result, message, out = mailed(run_cli, tmp_path, "--format", "json", chart_setting=False)
    else:
        result, message, out = mailed(run_cli, tmp_path, "--format", "json", "--no-chart")
    doc = json.loads(result.stdout)
    assert [f["table"] for f in doc["files"]][5:] == ["report"] and doc["chart_note"] is None  # no PNG
    assert not list(out.glob("*.png"))
    assert message.get_body(("related",)) is None and "cid:" not in message.get_body(("html",)).get_content()
    assert "chart" not in message.get_body(("plain",)).get_content()


@pytest.mark.slow  # a real planner process
def test_without_chart_the_report_reads_no_trend_and_loads_no_matplotlib(run_cli, engine, tmp_path):
    load(run_cli, tmp_path, ROWS)
    assert build_report(engine, REPORT_DAY, chart=False).trend is None
    code, heavy, output = loaded(tmp_path, "report", "--out", str(tmp_path / "o"), "--no-chart")
    assert code == 0 and "matplotlib" not in heavy, output


def test_no_price_at_all_means_no_chart_and_no_word_about_it(run_cli, engine, tmp_path):
    report = build_report(engine, REPORT_DAY)  # an empty database, read directly (no snapshot)
    assert report.trend is not None and report.trend.empty and report.as_of is None
    chart = write_chart(report, tmp_path)
    assert (chart.path, chart.trend, chart.note) == (None, None, None) and not list(tmp_path.glob("*.png"))

    load(run_cli, tmp_path, ROWS)
    result, message, out = mailed(run_cli, tmp_path, "--provider", "volcengine")  # filters matching no price
    assert not list(out.glob("*.png")) and len(list(out.glob("*.csv"))) == 5
    assert "chart" not in result.output
    assert "chart" not in message.get_body(("plain",)).get_content()
    assert message.get_body(("related",)) is None


def test_prices_but_none_on_demand_give_a_note_instead_of_a_chart(run_cli, tmp_path):
    load(run_cli, tmp_path, [on(0, "12948", billing="monthly"), on(1, "5", billing="spot")])
    result, message, out = mailed(run_cli, tmp_path)
    note = line_of(result.stdout, "No price chart:")  # the state, and the window it looked in
    assert "on-demand" in note and f"from {ago(29)} to {DAY}" in note and result.stderr == ""
    assert not list(out.glob("*.png"))
    assert note in message.get_body(("plain",)).get_content()
    assert message.get_body(("related",)) is None


def test_a_single_day_is_drawn_as_points(run_cli, engine, tmp_path):
    load(run_cli, tmp_path, [on(0, "27"), on(0, "14", **L20)])
    report = build_report(engine, REPORT_DAY)
    trend = select_trend(report)
    assert trend is not None and trend.single_day and trend.first_day == DAY
    assert [(line.gpu_model, line.days, line.change) for line in trend.lines] == [
        ("A100-40GB", (DAY,), None),
        ("L20-48GB", (DAY,), None),
    ]
    chart = write_chart(report, tmp_path)
    assert chart.path is not None and png_size(chart.path) == (960, 480)


def test_a_drawing_failure_costs_neither_the_files_nor_the_email(run_cli, tmp_path, monkeypatch):
    def broken(*args: object) -> None:
        raise RuntimeError("no canvas today\nsecond line")

    load(run_cli, tmp_path, ROWS)
    monkeypatch.setattr("reports.chart.draw_trend", broken)
    result, message, out = mailed(run_cli, tmp_path, "--format", "json")
    (warning,) = result.stderr.splitlines()  # one line: the error's first line only
    assert warning.startswith("Warning:") and "RuntimeError: no canvas today" in warning
    assert "second line" not in warning and "CSV files are complete" in warning
    doc = json.loads(result.stdout)
    assert len(doc["files"]) == 6 and "RuntimeError: no canvas today" in doc["chart_note"]  # CSVs, page
    assert len(list(out.glob("*.csv"))) == 5 and not list(out.glob("*.png"))
    assert len(list(message.iter_attachments())) == 6 and message.get_body(("related",)) is None
    assert "RuntimeError: no canvas today" in message.get_body(("plain",)).get_content()


def test_without_matplotlib_the_report_is_written_with_a_warning(run_cli, tmp_path, monkeypatch):
    load(run_cli, tmp_path, ROWS)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    out = tmp_path / "out"
    out.mkdir()  # an existing folder: standard error holds only what the test is about
    result = run_cli("report", "--out", str(out))
    assert result.exit_code == 0, result.output
    (warning,) = result.stderr.splitlines()
    assert warning.startswith("Warning:") and "matplotlib is not installed" in warning
    assert "pip install matplotlib" in warning
    assert len(list(out.glob("*.csv"))) == 5 and not list(out.glob("*.png"))
    assert "cheapest_trend" not in result.stdout


def test_a_full_disk_leaves_no_half_png(run_cli, tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    def disk_full(self, fh, **kwargs):  # noqa: ANN001, ANN003
        fh.write(b"\x89PNG half a picture")
        raise OSError(errno.ENOSPC, "No space left on device")

    load(run_cli, tmp_path, ROWS)
    monkeypatch.setattr(Figure, "savefig", disk_full)
    out = tmp_path / "out"
    result = run_cli("report", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert "not drawn: No space left on device" in result.stderr
    # no PNG, whole or half, no temp file; the CSV files and the page are written
    assert sorted(p.suffix for p in out.iterdir()) == [".csv"] * 5 + [".html"]


def test_the_nightly_job_draws_the_chart_and_a_failure_is_only_a_warning(run_cli, tmp_path, monkeypatch):
    monkeypatch.setattr(
        "planner.ops.scheduler.refresh_step", fake_refresh(write_csv(tmp_path / "n.csv", ROWS), [])
    )
    config = schedule_config(
        tmp_path
    )  # no e-mail: the job writes the report (mailing it is produce_report's)
    result = run_cli("--config", str(config), "schedule", "--once")
    assert result.exit_code == 0, result.output
    (png,) = (tmp_path / "reports").glob("*_cheapest_trend.png")
    assert f"report: drew {png.name}" in (tmp_path / "job.log").read_text()

    png.unlink()
    monkeypatch.setattr("reports.chart.draw_trend", lambda *a: 1 / 0)
    result = run_cli("--config", str(config), "schedule", "--job", "report")  # it ran tonight already
    assert result.exit_code == 0, result.output  # the chart is an extra: the job still succeeds
    log = (tmp_path / "job.log").read_text()
    failed = next(line for line in log.splitlines() if "chart was not drawn" in line)
    assert "report:" in failed and "ZeroDivisionError: division by zero" in failed
    assert len(list((tmp_path / "reports").glob("*.csv"))) == 5 and not png.exists()


def test_the_title_carries_the_real_dates_and_says_when_the_data_stopped(run_cli, engine, tmp_path):
    from reports.chart import _subtitle, title

    load(run_cli, tmp_path, ROWS)
    fresh = select_trend(build_report(engine, REPORT_DAY))  # a report the day after its newest price
    assert title(fresh).endswith(f", {ago(29)} to {DAY}")  # the real first and last days
    old = select_trend(build_report(engine, DAY + dt.timedelta(days=40)))  # the snapshot, weeks later
    assert title(old) == title(fresh) and old.stale_days == 39 and fresh.stale_days == 0
    stopped = _subtitle(old).splitlines()[-1]
    assert stopped.startswith("No newer price:") and " 40 days older" in stopped
    assert "no newer price" not in _subtitle(fresh)
    assert old.first_day == ago(29) and old.last_day == DAY  # the window is where the data is
