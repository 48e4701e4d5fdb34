"""GPUs rented only on application: the table (planner/data/on_application.csv), its reader, and where
``quote`` and ``gpus`` show it (never as a price or a recommendation)."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
from importlib import resources

import pytest

from planner import catalog, on_application
from planner.on_application import COLUMNS, _entry, for_gpu, for_models, providers_for

TENCENT_TICKET = {"H800-80GB", "H20-96GB", "A800-80GB", "L20-48GB", "L40-48GB", "L40S-48GB"}


def test_every_entry_names_a_catalog_gpu_a_provider_its_words_source_and_day():
    entries = on_application.entries()
    assert entries
    for e in entries:
        assert catalog.get_model(e.gpu_model).name == e.gpu_model
        assert e.wording_en and e.source and e.observed <= dt.date(2026, 12, 1)
    text = resources.files("planner").joinpath("data/on_application.csv").read_text(encoding="utf-8")
    assert tuple(next(csv.reader(io.StringIO(text)))) == COLUMNS


def test_the_tencent_calculator_and_volcengine_invitations_are_in_the_table():
    """shared/data/README.md: Tencent's price calculator (GPU机型, Guangzhou, 2026-09-15) offers P4,
    P40, T4, V100 and A100 only, the others need a ticket or whitelist; Volcengine's H20 families
    pni3l and pni3ld are invitation-only with no public price."""
    tencent = {e.gpu_model for e in on_application.entries() if e.provider == "tencent"}
    assert tencent == TENCENT_TICKET
    assert not tencent & {"P4-8GB", "P40-24GB", "T4-16GB", "V100-16GB", "V100-32GB", "A100-40GB", "A100-80GB"}
    volc = [e for e in for_gpu("H20-96GB") if e.provider == "volcengine"]
    assert [e.instance_family for e in volc] == ["pni3l", "pni3ld"]
    assert all("invitation" in e.wording_en for e in volc)
    assert {e.observed for e in on_application.entries()} == {dt.date(2026, 9, 15)}


def test_lookups_by_model_and_provider():
    assert [e.provider for e in for_gpu("H800-80GB")] == ["tencent"]
    assert for_gpu("T4-16GB") == () and for_gpu("no-such-gpu") == ()
    assert providers_for("H20-96GB") == ("tencent", "volcengine")  # each provider once
    assert {e.provider for e in for_models(["H20-96GB", "L20-48GB"], ["volcengine"])} == {"volcengine"}
    assert len(for_models(["H20-96GB", "L20-48GB"])) == 4


def test_wording_keeps_the_chinese_first_where_it_was_captured():
    e = for_gpu("H800-80GB")[0]
    assert e.wording_zh is None and e.wording == e.wording_en  # no capture kept Tencent's own words
    with_zh = _entry({**e.to_dict(), "wording_zh": "需申请", "observed": "2026-09-15"}, 2)
    assert with_zh.wording == f"需申请 ({e.wording_en})"
    assert e.to_dict()["observed"] == "2026-09-15" and e.to_dict()["instance_family"] == "HCCPNV5"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"provider": "tencnet"}, "provider"),
        ({"gpu_model": "H800"}, "not a catalog GPU model"),
        ({"wording_en": " "}, "wording"),
        ({"source": ""}, "source"),
    ],
)
def test_a_bad_row_is_refused_naming_its_line(change, message):
    row = {**for_gpu("H800-80GB")[0].to_dict(), "observed": "2026-09-15"}
    row = {k: str(v or "") for k, v in row.items()}
    with pytest.raises(ValueError, match=message) as info:
        _entry({**row, **change}, 7)
    assert "line 7" in str(info.value)


def test_quote_names_the_providers_renting_h800_on_application(run_cli):
    """Done when ``quote --gpu H800`` names them: in the table after the options, and in JSON under its
    own key, never among the options or as the recommendation."""
    table = run_cli("quote", "--gpu", "H800", "--hours", "100")
    assert table.exit_code == 0, table.output
    tail = table.stdout[table.stdout.index("Rented only on application") :]
    assert "tencent: H800-80GB, family HCCPNV5: rented only after a ticket or whitelist" in tail
    doc = json.loads(run_cli("quote", "--gpu", "H800", "--hours", "100", "--format", "json").stdout)
    (entry,) = doc["on_application"]
    assert (entry["provider"], entry["gpu_model"], entry["instance_family"]) == (
        "tencent",
        "H800-80GB",
        "HCCPNV5",
    )
    assert "price" not in " ".join(entry) and "Tencent Cloud price calculator" in entry["source"]
    assert all(o["provider"] != "tencent" or o["gpu_model"] != "H800-80GB" for o in doc["options"])
    assert (doc["recommendation"] or {}).get("provider") != "tencent"
    only_autodl = json.loads(
        run_cli("quote", "--gpu", "H800", "--hours", "100", "--provider", "autodl", "--format", "json").stdout
    )
    assert only_autodl["on_application"] == []  # --provider narrows this list too
    csv_out = run_cli("quote", "--gpu", "H800", "--hours", "100", "--format", "csv").stdout
    assert "on application" not in csv_out.lower()  # CSV rows are priced options only


def test_gpus_names_the_providers_renting_on_application(run_cli):
    table = run_cli("gpus", "--gpu", "H20")
    assert table.exit_code == 0, table.output
    assert "on application" in table.stdout and "tencent, volcengine" in table.stdout
    (h20,) = json.loads(run_cli("gpus", "--gpu", "H20", "--format", "json").stdout)
    assert h20["on_application"] == ["tencent", "volcengine"]
    (t4,) = json.loads(run_cli("gpus", "--gpu", "T4", "--format", "json").stdout)
    assert t4["on_application"] == []
    rows = list(csv.DictReader(io.StringIO(run_cli("gpus", "--gpu", "L40S", "--format", "csv").stdout)))
    assert "tencent" in rows[0]["on_application"]
