"""The report's CSV files as a spreadsheet reads them: times as dates, money as numbers to its places,
and the cheapest table in the order teams rent GPUs (data-centre cards, then current GeForce, then the
rest), read back by a real spreadsheet (LibreOffice headless, converting to xlsx, read with openpyxl)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import price_row, write_csv
from tests.helpers.tools import required
from vocab import iso_time, sheet_time

OBSERVED = "2026-11-01T06:30:15Z"  # not midnight: a date-only reading would not pass for a time
AUTODL = {"provider": "autodl", "region": "west-A", "observed_at": OBSERVED}
# (GPU model, CNY per GPU-hour): the old and workstation cards are the cheapest, as on AutoDL.
PRICES = [
    ("RTX2080TI-11GB", "0.88"),  # under 1 CNY an hour: 4 places
    ("T4-16GB", "0.6"),
    ("RTX3080-10GB", "1"),
    ("RTXA4000-16GB", "1.2"),
    ("RTX4090-24GB", "1.98"),
    ("L20-48GB", "3.5"),
    ("A100-80GB", "5.2"),
    ("A100-40GB", "4.1"),
    ("H20-96GB", "6.5"),
    ("H800-80GB", "15"),
]
# The ranking: by family (gpus.csv's family_rank), cheapest first within one (the two A100 sizes).
RANKED = [
    ("H20-96GB", "datacenter"),
    ("H800-80GB", "datacenter"),
    ("A100-40GB", "datacenter"),
    ("A100-80GB", "datacenter"),
    ("L20-48GB", "datacenter"),
    ("RTX4090-24GB", "geforce_current"),
    ("RTXA4000-16GB", "other"),
    ("RTX3080-10GB", "other"),
    ("RTX2080TI-11GB", "other"),
    ("T4-16GB", "other"),
]
SOFFICE = shutil.which("soffice")
needs_soffice = pytest.mark.skipif(
    SOFFICE is None and not required(),  # CI requires it (tests.helpers.tools): missing, the test fails
    reason="LibreOffice (soffice) is not installed: apt-get install libreoffice-calc-nogui to run it",
)


def write_report(run_cli, tmp_path: Path) -> Path:  # noqa: ANN001
    """``planner report`` over PRICES; the path of its cheapest file."""
    rows = [price_row(gpu_model=m, instance_type=m, price=p, **AUTODL) for m, p in PRICES]
    result = run_cli("import", str(write_csv(tmp_path / "p.csv", rows)))
    assert result.exit_code == 0, result.output
    out = tmp_path / "out"
    result = run_cli("report", "--no-chart", "--out", str(out))
    assert result.exit_code == 0, result.output
    (path,) = out.glob("*_cheapest.csv")
    return path


def read_rows(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8-sig"))))


def test_the_cheapest_table_leads_with_the_gpus_teams_rent_and_names_their_group(run_cli, tmp_path):
    """Not the cheapest old cards first (an RTX 2080 Ti, a T4): data-centre cards by family, then current
    GeForce, then the rest; the order is the file's, and ``gpu_group`` says which group a row is in."""
    rows = read_rows(write_report(run_cli, tmp_path))
    assert [(r["gpu_model"], r["gpu_group"]) for r in rows] == RANKED
    assert list(rows[0])[-1] == "gpu_group"  # added last: the other columns keep their places
    by_model = {r["gpu_model"]: r for r in rows}
    assert by_model["RTX2080TI-11GB"]["cny_per_gpu_hour"] == "0.8800"  # per hour under 1 CNY: 4 places
    assert by_model["H800-80GB"]["cny_per_gpu_hour"] == "15.00"
    assert by_model["H20-96GB"]["observed_at_utc"] == "2026-11-01 06:30:15"


def test_the_catalog_ranks_every_family_once_group_by_group():
    from planner import catalog

    ranks = {m.family: (m.family_rank, m.gpu_group) for m in catalog.all_models()}
    assert sorted(ranks.values()) == sorted(set(ranks.values()))  # one rank per family
    groups = [group for _, group in sorted(ranks.values())]
    assert groups == sorted(groups, key=catalog.GPU_GROUPS.index)
    assert (
        catalog.rental_rank("H20-96GB")
        < catalog.rental_rank("RTX4090-24GB")
        < catalog.rental_rank("RTX2080TI-11GB")
    )
    assert catalog.rental_rank("not a GPU") > max(catalog.rental_rank(m.name) for m in catalog.all_models())


def as_xlsx(csv_path: Path, tmp_path: Path) -> Path:
    """``csv_path`` opened by LibreOffice Calc and saved as xlsx, as a person opening it would see it.

    The import filter: comma, double quotes, UTF-8 (76), from line 1, US English (1033) so the machine's
    locale does not decide, and "detect special numbers" on, as Excel and WPS always do when they open a
    CSV (without it LibreOffice keeps a date and time as text; a bare date it reads either way). A
    profile of its own, so parallel tests never share LibreOffice's lock."""
    out = tmp_path / "xlsx"
    profile = (tmp_path / "lo-profile").as_uri()
    subprocess.run(
        [SOFFICE or "soffice", f"-env:UserInstallation={profile}", "--headless",
         "--infilter=CSV:44,34,76,1,,1033,false,true", "--convert-to", "xlsx", "--outdir", str(out),
         str(csv_path)],
        check=True, capture_output=True, timeout=120, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip
    return out / (csv_path.stem + ".xlsx")


def sheet(path: Path) -> list[dict[str, object]]:
    """The first sheet's cells by header, as openpyxl reads the xlsx."""
    openpyxl = pytest.importorskip("openpyxl")
    rows = list(openpyxl.load_workbook(path).active.iter_rows())
    header = [c.value for c in rows[0]]
    return [dict(zip(header, row, strict=True)) for row in rows[1:]]


@needs_soffice
def test_a_spreadsheet_reads_the_report_times_as_dates_and_money_as_numbers(run_cli, tmp_path):
    rows = sheet(as_xlsx(write_report(run_cli, tmp_path), tmp_path))
    assert [r["gpu_model"].value for r in rows] == [
        m for m, _ in RANKED
    ]  # UTF-8 with its BOM read as such: the header is "gpu_model"
    first = rows[0]
    assert first["observed_at_utc"].is_date
    assert first["observed_at_utc"].value == dt.datetime(2026, 11, 1, 6, 30, 15)
    for row in rows:
        price = row["cny_per_gpu_hour"]
        assert price.data_type == "n" and isinstance(price.value, float | int), price.value
    assert {r["gpu_model"].value: r["cny_per_gpu_hour"].value for r in rows}["RTX2080TI-11GB"] == 0.88


@needs_soffice
def test_the_iso_spelling_with_t_and_z_is_text_to_the_same_spreadsheet(tmp_path):
    """Why the files changed: the same reader takes ``2026-11-01T06:30:15Z`` for text."""
    moment = dt.datetime(2026, 11, 1, 6, 30, 15)
    path = tmp_path / "times.csv"
    path.write_text(f"old,new\n{iso_time(moment)},{sheet_time(moment)}\n", encoding="utf-8-sig")
    (row,) = sheet(as_xlsx(path, tmp_path))
    assert not row["old"].is_date and row["old"].value == "2026-11-01T06:30:15Z"
    assert row["new"].is_date and row["new"].value == moment


def test_cheapest_frame_follows_the_ranking_it_is_given_and_puts_unranked_models_last():
    """``reports`` knows no GPU: the order and the groups come in ``CheapestChoice.ranking``."""
    import pandas as pd

    from reports.data import PRICE_COLUMNS, CheapestChoice, cheapest_frame

    def offer(model: str, per_hour: float) -> dict[str, object]:
        return {c: None for c in PRICE_COLUMNS} | {
            "gpu_model": model, "cny_per_gpu_hour": per_hour, "provider": "autodl", "region": "west-A",
            "instance_type": model, "gpus_per_instance": 1.0, "billing": "on_demand", "price": per_hour,
            "currency": "CNY", "unit": "hour", "observed_at_utc": pd.Timestamp("2026-11-01"),
            "from_snapshot": False,
        }  # fmt: skip

    latest = pd.DataFrame([offer("old", 0.5), offer("big", 9.0), offer("big2", 8.0), offer("new", 3.0)])
    keys = {m: ("autodl", "west-A", m, "on_demand") for m in ("old", "big", "big2", "new")}
    ranking = {"big": (1, "datacenter"), "big2": (1, "datacenter"), "old": (5, "other")}
    frame = cheapest_frame(latest, CheapestChoice(offers=keys, ranking=ranking))
    assert list(zip(frame["gpu_model"], frame["gpu_group"].fillna(""), strict=True)) == [
        ("big2", "datacenter"),  # one rank: cheapest first
        ("big", "datacenter"),
        ("old", "other"),
        ("new", ""),  # not ranked: last, no group (an empty cell)
    ]
    unranked = cheapest_frame(latest, CheapestChoice(offers=keys))
    assert list(unranked["gpu_model"]) == ["big", "big2", "new", "old"] and unranked["gpu_group"].isna().all()
