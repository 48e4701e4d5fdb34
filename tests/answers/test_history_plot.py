"""``planner history --plot``: the picture of the history, its series data, and its failures."""

from __future__ import annotations

import datetime as dt
import errno
import json
import sys
from decimal import Decimal

import pytest

from db.queries import HistoryRow, price_history
from planner.views.plot import MAX_SERIES, history_series, plot_history
from tests.conftest import price_row, write_csv
from tests.helpers.cli import loaded
from tests.helpers.history import TODAY, seed
from tests.helpers.png import png_size


def ago(n: int) -> dt.date:
    return TODAY - dt.timedelta(days=n)


def test_plot_writes_a_png_and_keeps_the_normal_output(engine, run_cli, tmp_path):
    seed(engine)
    out = tmp_path / "plots"
    out.mkdir()
    result = run_cli("history", "--gpu", "A100", "--plot", str(out / "h.png"))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("History of A100-40GB, A100-80GB")  # the table, as without --plot
    (wrote,) = result.stderr.strip().splitlines()
    assert wrote.startswith(f"Wrote {out / 'h.png'}: ") and "3 series over 6 day(s)" in wrote
    assert f"{ago(6)} to {ago(1)}" in wrote  # the days drawn
    assert png_size(out / "h.png") == (1210, 616)  # 11 x 5.6 inches at 110 dpi
    assert (out / "h.png").stat().st_size > 20_000  # lines, labels and legends, not an empty canvas
    assert [p.name for p in out.iterdir()] == ["h.png"]  # no temporary file left beside it

    as_json = run_cli("history", "--gpu", "A100", "--format", "json", "--plot", str(out / "h.png"))
    assert as_json.exit_code == 0, as_json.output
    assert len(json.loads(as_json.stdout)["days"]) == 14  # stdout stays pure JSON; the note is on stderr


def test_series_are_the_days_cheapest_instance_per_provider_model_and_billing(engine):
    seed(engine)
    with engine.connect() as conn:
        rows = price_history(conn, ["A100-40GB", "A100-80GB"], ago(29))
    series, left_out = history_series(rows)
    assert left_out == 0
    # Cheapest latest price first: AutoDL 3.50, Tencent monthly 12948 / 730 h, Tencent on demand 27.
    assert [(s.provider, s.billing) for s in series] == [
        ("autodl", "on_demand"),
        ("tencent", "monthly"),
        ("tencent", "on_demand"),
    ]
    autodl, monthly, on_demand = series
    assert on_demand.days == tuple(ago(n) for n in range(6, 0, -1))
    assert on_demand.min_cny_per_gpu_hour == (30, 30, 30, 27, 27, 27)
    assert on_demand.max_cny_per_gpu_hour == (33,) * 6  # the Guangzhou instance, drawn as the band
    assert on_demand.sold_out_days == ()  # one of two instances sold out is not "sold out"
    assert autodl.sold_out_days == (ago(1),)  # no idle GPU that day
    assert monthly.subscription and not on_demand.subscription
    assert monthly.min_cny_per_gpu_hour == (17.736986,) * 6


def test_an_8_gpu_instance_is_drawn_per_gpu_hour_and_a_foreign_price_in_cny(engine, run_cli, tmp_path):
    rows = [
        price_row(instance_type="GT4.41XLARGE948", gpu_count=8, price="240", observed_at=ago(2)),
        price_row(instance_type="GT4.41XLARGE948", gpu_count=8, price="232", observed_at=ago(1)),
        price_row(instance_type="GT4.41XLARGE948", gpu_count=8, billing="monthly", price="116800",
                  observed_at=ago(1)),
        price_row(provider="aliyun", region="cn-beijing", instance_type="ecs.gn7e-c16g1.8xlarge",
                  gpu_model="A100-80GB", gpu_count=2, price="10", currency="USD", observed_at=ago(1)),
    ]  # fmt: skip
    imported = run_cli("import", str(write_csv(tmp_path / "p.csv", rows)))
    assert imported.exit_code == 0, imported.output
    with engine.connect() as conn:
        series, _ = history_series(price_history(conn, ["A100-40GB", "A100-80GB"], ago(29)))
    by_key = {(s.provider, s.billing): s for s in series}
    assert by_key["tencent", "on_demand"].min_cny_per_gpu_hour == (30.0, 29.0)  # 240 / 8, 232 / 8
    assert by_key["tencent", "monthly"].min_cny_per_gpu_hour == (20.0,)  # 116800 / 730 h / 8
    assert by_key["aliyun", "on_demand"].min_cny_per_gpu_hour == (35.5,)  # 10 USD x 7.10 / 2
    result = run_cli("history", "--gpu", "A100", "--plot", str(tmp_path / "8.png"))
    assert result.exit_code == 0 and "Wrote" in result.stderr, result.output
    assert png_size(tmp_path / "8.png") == (1210, 616)


def synthetic(count: int) -> list[HistoryRow]:
    """``count`` series over three days, series i at 10 + i CNY per GPU-hour on the last day."""
    rows = []
    for i in range(count):
        for n, price in ((3, 50 - i), (2, 50 - i), (1, 10 + i)):
            value = Decimal(price)
            rows.append(HistoryRow(ago(n), f"p{i:02d}", "A100-40GB", "on_demand", 1, value, value))
    return rows


def test_the_cheapest_series_are_drawn_and_the_rest_counted(tmp_path):
    summary = plot_history(synthetic(MAX_SERIES + 3), ["A100-40GB"], 30, tmp_path / "many.svg")
    assert summary.left_out == 3
    assert [s.provider for s in summary.series] == [f"p{i:02d}" for i in range(MAX_SERIES)]  # by latest
    assert [len(s.days) for s in summary.series] == [3] * MAX_SERIES
    assert (summary.first_day, summary.last_day, summary.span_days) == (ago(3), ago(1), 3)
    text = (tmp_path / "many.svg").read_text(encoding="utf-8")
    assert text.startswith("<?xml") and "<svg" in text
    pdf = plot_history(synthetic(2), ["A100-40GB"], 30, tmp_path / "two.PDF")
    assert pdf.left_out == 0 and (tmp_path / "two.PDF").read_bytes().startswith(b"%PDF")


def one_error_line(result) -> str:  # noqa: ANN001 - click's Result
    assert "Traceback" not in result.output
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("Error: ") and all(line.startswith("Hint: ") for line in lines[1:]), lines
    return lines[0]


def test_no_prices_to_plot_is_an_error_and_writes_nothing(engine, run_cli, tmp_path):
    seed(engine)
    result = run_cli("history", "--gpu", "H800", "--plot", str(tmp_path / "h.png"))
    assert result.exit_code == 1
    error = one_error_line(result)
    assert "no prices for H800-80GB" in error and "30 day(s)" in error and "nothing to plot" in error
    assert not (tmp_path / "h.png").exists()


@pytest.mark.unmigrated
@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("h.jpg", "must end in .png, .svg or .pdf"),
        ("h", "must end in .png, .svg or .pdf"),
        ("missing/h.png", "does not exist"),
        (".", "the file name must end in"),
        ("folder.png", "it is a folder"),
    ],
)
def test_a_bad_plot_path_is_one_line_before_the_database_is_read(run_cli, db_url, tmp_path, name, message):
    (tmp_path / "folder.png").mkdir()
    result = run_cli("history", "--gpu", "A100", "--plot", str(tmp_path / name))
    assert result.exit_code == 2
    assert message in one_error_line(result)
    assert result.stdout == ""
    if db_url.startswith("sqlite"):
        assert not (tmp_path / "planner.db").exists()  # refused before the database was opened


def test_a_failed_write_leaves_the_old_file_and_no_temporary_one(engine, run_cli, tmp_path, monkeypatch):
    from matplotlib.figure import Figure

    def disk_full(self, fh, **kwargs):  # noqa: ANN001, ANN003
        fh.write(b"\x89PNG half a picture")
        raise OSError(errno.ENOSPC, "No space left on device")

    seed(engine)
    out = tmp_path / "plots"
    out.mkdir()
    (out / "h.png").write_bytes(b"yesterday's plot")
    monkeypatch.setattr(Figure, "savefig", disk_full)
    result = run_cli("history", "--gpu", "A100", "--plot", str(out / "h.png"))
    assert result.exit_code == 1
    error = one_error_line(result)
    assert "No space left on device" in error and "nothing was written" in error
    assert [p.name for p in out.iterdir()] == ["h.png"]
    assert (out / "h.png").read_bytes() == b"yesterday's plot"


def test_without_matplotlib_the_error_says_how_to_install_it(engine, run_cli, tmp_path, monkeypatch):
    seed(engine)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` now fails
    result = run_cli("history", "--gpu", "A100", "--plot", str(tmp_path / "h.png"))
    assert result.exit_code == 1
    assert "matplotlib" in one_error_line(result) and "Hint: pip install matplotlib" in result.stderr
    assert not (tmp_path / "h.png").exists()


@pytest.mark.slow  # real planner processes
def test_help_shows_plot_and_history_without_it_loads_no_matplotlib(tmp_path, runner):
    from planner.cli import cli

    help_text = runner.invoke(cli, ["history", "--help"]).output
    assert "--plot FILE" in help_text and "--plot a100.png" in help_text
    code, heavy, output = loaded(tmp_path, "history", "--gpu", "A100", "--days", "3650")
    assert code == 0 and "History of A100-40GB" in output, output
    assert "matplotlib" not in heavy, output
    code, heavy, output = loaded(tmp_path, "history", "--gpu", "A100", "--plot", "h.gif")
    assert code == 2 and heavy == [], output  # refused before SQLAlchemy or matplotlib is imported


def test_the_title_carries_the_window_and_says_when_it_ends_at_the_newest_price(tmp_path, monkeypatch):
    import planner.views.plot as plot

    titles: list[str] = []
    original = plot._draw

    def spy(fig, summary, models, window, max_series):  # noqa: ANN001, ANN202
        original(fig, summary, models, window, max_series)
        titles.append(fig.axes[0].get_title(loc="left"))

    monkeypatch.setattr(plot, "_draw", spy)
    plot_history(synthetic(1), ["A100-40GB"], 30, tmp_path / "today.svg")
    plot_history(synthetic(1), ["A100-40GB"], 1, tmp_path / "old.svg", until=ago(1))
    today, old = titles
    assert today.startswith("A100-40GB: ") and today.endswith(", last 30 days")  # the model, the window
    assert old.startswith("A100-40GB: ") and f", 1 day to {ago(1)} " in old and "newest price" in old
