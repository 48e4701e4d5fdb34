"""`planner import` / `planner export`: atomic, line-numbered, idempotent, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import func, select

from db.schema import instances, prices, scrape_runs
from planner.config import load_config
from planner.ingest.importer import ImportFileError, import_csv
from tests.conftest import price_row, write_csv
from vocab import IMPORT_REQUIRED_COLUMNS

FX = load_config(env={}).section("fx")


def count(engine, table) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(table)).scalar_one()


def test_import_stores_rows_and_normalises(engine, tmp_path):
    path = write_csv(
        tmp_path / "p.csv",
        [
            price_row(gpu_model="NVIDIA A100 40GB", billing="payg"),
            price_row(billing="monthly", price="12948"),
            price_row(
                provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="4090", price="1.88"
            ),
        ],
    )
    result = import_csv(engine, path, FX)
    assert (result.rows, result.stored, result.already_present) == (3, 3, 0)
    with engine.connect() as conn:
        rows = conn.execute(
            select(instances.c.gpu_model, prices.c.billing, prices.c.unit, prices.c.cny_per_gpu_hour)
            .join(prices, prices.c.instance_id == instances.c.id)
            .order_by(instances.c.gpu_model, prices.c.billing)
        ).all()
    assert [tuple(r[:3]) for r in rows] == [
        ("A100-40GB", "monthly", "month"),
        ("A100-40GB", "on_demand", "hour"),
        ("RTX4090-24GB", "on_demand", "hour"),
    ]
    assert float(rows[0][3]) == pytest.approx(12948 / 730, abs=1e-5)


def test_reimporting_the_same_file_adds_nothing(engine, tmp_path):
    path = write_csv(tmp_path / "p.csv", [price_row(), price_row(billing="monthly", price="12948")])
    import_csv(engine, path, FX)
    again = import_csv(engine, path, FX)
    assert (again.stored, again.already_present) == (0, 2)
    assert count(engine, prices) == 2


def test_changed_prices_are_counted(engine, tmp_path):
    import_csv(engine, write_csv(tmp_path / "a.csv", [price_row(observed_at="2026-10-01")]), FX)
    later = import_csv(
        engine, write_csv(tmp_path / "b.csv", [price_row(observed_at="2026-10-02", price="27")]), FX
    )
    assert (later.stored, later.changed) == (1, 1)


@pytest.mark.parametrize(
    ("rows", "columns", "expected"),
    [
        ([price_row(), price_row(gpu_model="A1OO")], None, "line 3: unknown GPU 'A1OO'"),
        ([price_row(price="-3")], None, "line 2: price '-3' must be greater than zero"),
        ([price_row(price="0")], None, "line 2: price '0' must be greater than zero"),
        ([price_row(price="abc")], None, "line 2: price 'abc' is not a number"),
        ([price_row(price="999999")], None, "absurd"),
        ([price_row(billing="hourlyish")], None, "line 2: unknown billing mode 'hourlyish'"),
        ([price_row(gpu_count="0")], None, "line 2: gpu_count '0' must be above 0"),
        ([price_row(observed_at="yesterday")], None, "line 2: observed_at 'yesterday' is not an ISO date"),
        ([price_row(observed_at="2999-01-01")], None, "in the future"),
        ([price_row(currency="EUR")], None, "currency 'EUR' has no rate"),
        ([price_row(provider="aws")], None, "line 2: unknown provider 'aws'"),
        ([price_row(region="")], None, "line 2: region is empty"),
        ([price_row()], ["provider", "region"], "line 1: missing columns"),
        ([price_row()], ["provider", "provider"], "line 1: duplicate column 'provider'"),
    ],
)
def test_a_bad_row_stores_nothing_and_names_its_line(engine, tmp_path, rows, columns, expected):
    path = write_csv(tmp_path / "bad.csv", rows, columns)
    with pytest.raises(ImportFileError) as err:
        import_csv(engine, path, FX)
    assert expected in err.value.message
    assert err.value.message.startswith("bad.csv: ")
    assert count(engine, prices) == 0
    assert count(engine, instances) == 0
    assert count(engine, scrape_runs) == 0


def test_unknown_extra_column_is_refused(engine, tmp_path):
    path = tmp_path / "x.csv"
    header = "provider,region,instance_type,gpu_model,gpu_count,billing,price,currency,observed_at,colour"
    path.write_text(header + "\ntencent,r,t,A100-40GB,1,on_demand,1,CNY,2026-01-01,red\n", encoding="utf-8")
    with pytest.raises(ImportFileError, match="line 1: unknown column 'colour'"):
        import_csv(engine, path, FX)


def test_conflicting_gpu_for_a_stored_instance_is_refused_atomically(engine, tmp_path):
    import_csv(engine, write_csv(tmp_path / "a.csv", [price_row()]), FX)
    bad = write_csv(
        tmp_path / "b.csv",
        [
            price_row(instance_type="NEW", observed_at="2026-11-02"),
            price_row(gpu_model="A100-80GB", observed_at="2026-11-02"),
        ],
    )
    with pytest.raises(ImportFileError, match="is recorded as 1x A100-40GB"):
        import_csv(engine, bad, FX)
    assert count(engine, prices) == 1
    assert count(engine, instances) == 1


def test_encoding_bom_optional_columns_and_quoted_fields(engine, tmp_path):
    path = tmp_path / "bom.csv"
    text = (
        "\ufeffobserved_at,price,provider,region,instance_type,gpu_model,gpu_count,billing,currency,vcpus,memory_gb,source\n"
        '2026-11-01T08:30:00+08:00,1.88,autodl,西北B区,RTX 4090,RTX 4090,1,payg,CNY,,,"doc, with comma"\n'
    )
    path.write_text(text, encoding="utf-8")
    result = import_csv(engine, path, FX)
    assert result.stored == 1
    with engine.connect() as conn:
        observed, source = conn.execute(select(prices.c.observed_at, prices.c.source)).one()
    assert observed.isoformat() == "2026-11-01T00:30:00"  # stored in UTC
    assert source == "doc, with comma"


def test_non_utf8_and_missing_files_are_clear_errors(engine, tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes(b"provider,region\n" + "caf\xe9\n".encode("latin-1"))
    with pytest.raises(ImportFileError, match="line 2: not UTF-8"):
        import_csv(engine, path, FX)
    with pytest.raises(ImportFileError, match="cannot read"):
        import_csv(engine, tmp_path / "nope.csv", FX)
    with pytest.raises(ImportFileError, match="empty"):
        import_csv(engine, write_empty(tmp_path / "empty.csv"), FX)


def write_empty(path: Path) -> Path:
    path.write_text("", encoding="utf-8")
    return path


STOCK_BEFORE_0005 = ["stock_status", "idle_gpus", "total_gpus", "orderable_gpus"]
PER_MACHINE = ["max_idle_gpus_per_machine", "max_orderable_gpus_per_machine"]


def _stock_of(engine) -> list[tuple]:
    from db.schema import availability

    with engine.connect() as conn:
        return [
            tuple(row)
            for row in conn.execute(
                select(
                    availability.c.idle_gpus,
                    availability.c.max_idle_gpus_per_machine,
                    availability.c.max_orderable_gpus_per_machine,
                )
            )
        ]


def test_an_export_written_before_the_per_machine_columns_still_imports(engine, tmp_path):
    row = price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB")
    row |= {
        "price": "1.88",
        "stock_status": "available",
        "idle_gpus": 40,
        "total_gpus": 480,
        "orderable_gpus": 40,
    }
    path = write_csv(tmp_path / "old.csv", [row], list(IMPORT_REQUIRED_COLUMNS) + STOCK_BEFORE_0005)
    assert import_csv(engine, path, FX).stored == 1
    assert _stock_of(engine) == [(40, None, None)]


def test_the_per_machine_stock_round_trips_through_export_and_import(engine, tmp_path):
    row = price_row(provider="autodl", region="west-B", instance_type="RTX 4090", gpu_model="RTX4090-24GB")
    row |= {"price": "1.88", "idle_gpus": 40, "total_gpus": 480, "orderable_gpus": 40}
    row |= {"max_idle_gpus_per_machine": 2, "max_orderable_gpus_per_machine": 1}
    columns = list(IMPORT_REQUIRED_COLUMNS) + STOCK_BEFORE_0005 + PER_MACHINE
    assert import_csv(engine, write_csv(tmp_path / "new.csv", [row], columns), FX).stored == 1
    assert _stock_of(engine) == [(40, 2, 1)]
    from db.engine import ensure_schema, make_engine
    from planner.answers.export import write_export

    out = tmp_path / "out.csv"
    with out.open("w", encoding="utf-8") as fh:
        assert write_export(engine, fh) == 1
    header, line = out.read_text(encoding="utf-8").splitlines()
    cells = dict(zip(header.split(","), line.split(","), strict=True))
    assert (cells["max_idle_gpus_per_machine"], cells["max_orderable_gpus_per_machine"]) == ("2", "1")
    again = make_engine(f"sqlite:///{tmp_path / 'again.db'}")
    ensure_schema(again)
    assert import_csv(again, out, FX).stored == 1
    assert _stock_of(again) == [(40, 2, 1)]
    again.dispose()
    bad = write_csv(tmp_path / "bad.csv", [row | {"max_idle_gpus_per_machine": "-2"}], columns)
    with pytest.raises(ImportFileError, match="max_idle_gpus_per_machine '-2' is negative"):
        import_csv(engine, bad, FX)


def test_export_round_trips_through_import(run_cli, tmp_path, db_url):
    source = write_csv(
        tmp_path / "in.csv",
        [price_row(), price_row(billing="monthly", price="12948", observed_at="2026-11-02")],
    )
    assert run_cli("import", str(source)).exit_code == 0
    out = tmp_path / "out.csv"
    result = run_cli("export", "--out", str(out))
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert (
        lines[0]
        == "provider,region,instance_type,gpu_model,gpu_count,billing,price,currency,observed_at,vcpus,memory_gb,source,"
        "gpu_note,tiers,median_price,stock_status,idle_gpus,total_gpus,orderable_gpus,"
        "max_idle_gpus_per_machine,max_orderable_gpus_per_machine,confirmed_at,unlisted_at,from_snapshot"
    )
    assert len(lines) == 3
    assert lines[1].startswith(
        "tencent,ap-beijing,GT4.4XLARGE96,A100-40GB,1,on_demand,28.64,CNY,2026-11-01T00:00:00"
    )
    again = run_cli("import", str(out), "--format", "json")
    assert '"stored": 0' in again.output


def test_export_keeps_iso_times_and_every_digit_while_csv_for_people_rounds(run_cli, tmp_path):
    """The export is for import, not for a spreadsheet: ISO 8601 with Z and the price as stored, where
    ``prices --format csv`` writes the sheet spelling and 2 places; import reads either time spelling."""
    row = price_row(price="28.6449", observed_at="2026-11-01T06:30:15Z")
    assert run_cli("import", str(write_csv(tmp_path / "in.csv", [row]))).exit_code == 0
    out = tmp_path / "out.csv"
    assert run_cli("export", "--out", str(out)).exit_code == 0
    exported = out.read_text(encoding="utf-8").splitlines()[1]
    assert ",28.6449,CNY,2026-11-01T06:30:15Z," in exported
    shown = run_cli("prices", "--format", "csv").stdout.splitlines()[1]
    assert ",28.64,CNY,hour,28.64,2026-11-01 06:30:15," in shown
    sheet = price_row(
        price="28.6449", observed_at="2026-11-01 06:30:15"
    )  # the same moment, as a sheet has it
    again = run_cli("import", str(write_csv(tmp_path / "sheet.csv", [sheet])), "--format", "json")
    assert again.exit_code == 0 and '"stored": 0' in again.output, again.output


def test_the_price_row_is_declared_once():
    """vocab.PRICE_COLUMNS starts every price file and record: the import format, what export and the
    snapshot write, the benchmark's history, and ``prices``' JSON record and CSV row."""
    from dataclasses import fields

    from bench.generate import COLUMNS as BENCH_COLUMNS
    from planner.answers.prices import CSV_COLUMNS, ListedPrice
    from planner.ingest.snapshot_build import SNAPSHOT_COLUMNS
    from vocab import EXPORT_COLUMNS, PRICE_COLUMNS

    starts = {
        "import": IMPORT_REQUIRED_COLUMNS,
        "export": EXPORT_COLUMNS,
        "snapshot": SNAPSHOT_COLUMNS,
        "bench": tuple(BENCH_COLUMNS),
        "prices record": tuple(f.name for f in fields(ListedPrice)),
        "prices csv": CSV_COLUMNS,
    }
    assert {name: cols[: len(PRICE_COLUMNS)] for name, cols in starts.items()} == dict.fromkeys(
        starts, PRICE_COLUMNS
    )
