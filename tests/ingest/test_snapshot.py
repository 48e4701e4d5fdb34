"""The bundled snapshot: sourced, dated, reproducible from shared/data, and loaded only when needed."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from planner.config import load_config
from planner.ingest.snapshot import ensure_prices, snapshot_info, snapshot_path
from planner.regions import region_scope

# The project's source-data folder beside the repository (../shared/data), also from a git worktree.
SHARED_DATA = next(
    (p / "shared" / "data" for p in Path(__file__).resolve().parents[2:] if (p / "shared" / "data").is_dir()),
    Path(__file__).resolve().parents[3] / "shared" / "data",
)
needs_shared_data = pytest.mark.skipif(
    not SHARED_DATA.is_dir(), reason="shared/data is not beside the project"
)


def rows() -> list[dict[str, str]]:
    with snapshot_path().open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_snapshot_price_has_a_source_and_a_date():
    data = rows()
    assert len(data) > 100
    assert all(r["source"].strip() and r["observed_at"] for r in data)
    assert {r["provider"] for r in data} == {"aliyun", "tencent", "volcengine", "autodl"}
    inferred = [r for r in data if r["gpu_note"]]
    assert inferred and all("inferred" in r["gpu_note"] or "assumed" in r["gpu_note"] for r in inferred)
    info = snapshot_info()
    assert info.newest.isoformat() == max(r["observed_at"] for r in data)


@needs_shared_data
def test_snapshot_is_reproducible_from_shared_data(tmp_path):
    from planner.ingest import snapshot_build

    out = tmp_path / "snapshot.csv"
    snapshot_build.write(snapshot_build.build(SHARED_DATA), out)
    assert out.read_text(encoding="utf-8") == snapshot_path().read_text(encoding="utf-8")


def test_snapshot_loads_once_into_an_empty_database(engine):
    config = load_config(env={})
    info = ensure_prices(engine, config)
    assert info is not None and info.rows == len(rows())
    assert ensure_prices(engine, config) is None  # not twice


def test_snapshot_auto_load_can_be_switched_off(engine, tmp_path):
    path = tmp_path / "c.toml"
    path.write_text("[snapshot]\nauto_load = false\n")
    assert ensure_prices(engine, load_config(config_file=path, env={})) is None


def test_snapshot_has_2026_prices_of_each_providers_main_gpus():
    recent: dict[str, set[str]] = {}
    for r in rows():
        if r["observed_at"] >= "2025-01-01":
            recent.setdefault(r["provider"], set()).add(r["gpu_model"])
    autodl = {"RTX4090-24GB", "RTX4090D-24GB", "RTX3090-24GB", "RTX5090-32GB", "A100-40GB", "A100-80GB"}
    autodl |= {"A800-80GB", "H800-80GB", "H20-96GB", "L20-48GB"}
    assert autodl <= recent["autodl"]
    assert {"A10-24GB", "T4-16GB", "L20-48GB", "A100-80GB"} <= recent["aliyun"]
    assert {"T4-16GB", "A10-24GB", "V100-32GB", "A100-40GB"} <= recent["tencent"]
    modes = {(r["provider"], r["billing"]) for r in rows() if r["observed_at"] >= "2025-01-01"}
    assert {("aliyun", "monthly"), ("aliyun", "on_demand"), ("autodl", "spot")} <= modes


def test_a_year_only_date_is_said_loudly_and_confidence_stays_in_the_source():
    data = rows()
    year_only = [r for r in data if r["observed_at"] == "2024-01-01"]
    assert {r["provider"] for r in year_only} == {"autodl", "tencent", "volcengine"}
    assert all(r["source"].startswith("DATE UNKNOWN (only '~2024' known") for r in year_only)
    from_points = [r for r in data if "price CDN" not in r["source"]]
    assert all("[" in r["source"] for r in from_points)  # "[third-party ...]", "[verified-in-source ...]"
    promotion = [r for r in data if r["provider"] == "aliyun" and r["billing"] == "monthly"]
    assert any("PROMOTION price" in r["source"] for r in promotion)


def test_one_price_per_instance_billing_and_day_the_cheapest_with_the_others_named():
    data = rows()
    keys = [(r["provider"], r["region"], r["instance_type"], r["billing"], r["observed_at"]) for r in data]
    assert len(keys) == len(set(keys))  # the database keeps one: a second would be silently dropped
    (rtx5090,) = [r for r in data if r["instance_type"] == "RTX 5090" and r["observed_at"] == "2026-04-01"]
    assert rtx5090["price"] == "2.93" and "other figures that day: 3.24 CNY" in rtx5090["source"]
    assert max(len(r["source"]) for r in data) <= 500  # the importer's field limit


def test_autodl_points_use_autodl_gpu_names_so_one_gpu_is_one_series():
    names = {(r["gpu_model"], r["instance_type"]) for r in rows() if r["provider"] == "autodl"}
    by_model: dict[str, set[str]] = {}
    for model, itype in names:
        by_model.setdefault(model, set()).add(itype)
    assert by_model["H800-80GB"] == {"H800"} and by_model["H20-96GB"] == {"H20-NVLink"}
    assert by_model["A100-40GB"] == {"A100-PCIE-40GB"}


def latest(data: list[dict[str, str]]) -> dict[tuple[str, ...], dict[str, str]]:
    """Each offer's (provider, region, instance type, billing) latest row: what a quote reads."""
    out: dict[tuple[str, ...], dict[str, str]] = {}
    for r in data:
        key = (r["provider"], r["region"], r["instance_type"], r["billing"])
        if key not in out or out[key]["observed_at"] < r["observed_at"]:
            out[key] = r
    return out


def test_the_main_gpus_have_current_2026_prices_of_two_providers_on_the_mainland():
    """H20, RTX 4090, RTX 5090 and L20: each has a 2026 price, still listed, not an unverified lead and
    in mainland China, from at least two providers (issue 26)."""
    providers: dict[str, set[str]] = {}
    for r in latest(rows()).values():
        if (
            r["observed_at"] >= "2026-01-01"
            and not r["unlisted_at"]
            and not r["source"].startswith("UNVERIFIED")
            and region_scope(r["provider"], r["region"]) == "mainland"
        ):
            providers.setdefault(r["gpu_model"], set()).add(r["provider"])
    assert providers["H20-96GB"] >= {"autodl", "aliyun"}
    assert providers["RTX4090-24GB"] >= {"autodl", "aliyun"}
    assert providers["RTX5090-32GB"] >= {"autodl", "aliyun"}
    assert providers["L20-48GB"] >= {"aliyun", "volcengine"}


def test_a_newer_source_at_the_same_price_confirms_the_row_instead_of_adding_one():
    data = rows()
    tencent = [r for r in data if r["instance_type"] == "GN7.2XLARGE32" and r["billing"] == "on_demand"]
    assert [(r["price"], r["observed_at"], r["confirmed_at"]) for r in tencent] == [
        ("8.68", "2024-01-01", "2026-09-15")
    ]
    assert "unchanged on 2026-09-15 per Tencent CVM price calculator" in tencent[0]["source"]
    # Aliyun's page states no region: it confirms each mainland region's row at its price, no other.
    gn7i = {
        r["region"]: r
        for r in data
        if r["instance_type"] == "ecs.gn7i-c8g1.2xlarge" and r["observed_at"] == "2024-10-09"
    }
    assert {k for k, r in gn7i.items() if r["confirmed_at"] == "2026-09-15"} == {
        "cn-beijing",
        "cn-chengdu",
        "cn-guangzhou",
        "cn-shenzhen",
    }
    assert gn7i["cn-heyuan"]["price"] == "8.5794" and not gn7i["cn-heyuan"]["confirmed_at"]
    assert not [
        r for r in data if r["instance_type"] == "ecs.gn7i-c8g1.2xlarge" and r["observed_at"] == "2026-09-15"
    ]
    hongkong = [r for r in data if r["region"] == "cn-hongkong" and r["confirmed_at"]]
    assert not hongkong  # a mainland page says nothing of Hong Kong
    assert all(r["confirmed_at"] >= r["observed_at"] for r in data if r["confirmed_at"])


def test_an_offer_the_newest_source_does_not_list_is_kept_but_marked_unlisted():
    newest = latest(rows())
    l20 = newest[("autodl", "unspecified", "L20", "on_demand")]
    a100 = newest[("autodl", "unspecified", "A100-80GB", "on_demand")]
    assert l20["unlisted_at"] == a100["unlisted_at"] == "2026-09-15"
    assert "AutoDL's full machine list of 2026-09-15" in l20["source"]
    # Tencent's H20 needs a ticket (on application): a priced row of it is not an orderable offer.
    (h20,) = [r for r in newest.values() if r["provider"] == "tencent" and r["gpu_model"] == "H20-96GB"]
    assert h20["unlisted_at"] == "2026-09-15" and "need a ticket" in h20["source"]
    # Still listed: AutoDL's 40 GB A100, Tencent's A100 and T4.
    assert not newest[("autodl", "unspecified", "A100-PCIE-40GB", "on_demand")]["unlisted_at"]
    assert not [
        r
        for r in newest.values()
        if r["provider"] == "tencent" and r["gpu_model"] == "T4-16GB" and r["unlisted_at"]
    ]


def test_a_quote_on_the_snapshot_never_recommends_an_unlisted_offer(engine):
    from db.queries import latest_prices

    ensure_prices(engine, load_config(env={}))
    with engine.connect() as conn:
        offers = latest_prices(conn, gpu_models=["L20-48GB", "H20-96GB", "A100-80GB"])
    gone = {(o.provider, o.instance_type) for o in offers if o.unlisted_at is not None}
    assert gone == {
        ("autodl", "L20"),
        ("autodl", "A100-80GB"),
        ("tencent", "H20 instance (type not stated)"),
    }
    assert all(o.unlisted_at.date().isoformat() == "2026-09-15" for o in offers if o.unlisted_at)
    confirmed = {o.instance_type: o.confirmed_at for o in offers if o.provider == "aliyun" and o.confirmed_at}
    assert confirmed["ecs.gn7e-c16g1.4xlarge"].date().isoformat() == "2026-09-15"
    # A confirmed price seen by several sources is one observation once loaded: its dates and the
    # confirming source are kept on it.
    with engine.connect() as conn:
        (a100,) = latest_prices(conn, gpu_models=["A100-40GB"], providers=["autodl"])
    assert (a100.observed_at.date().isoformat(), a100.confirmed_at.date().isoformat()) == (
        "2026-04-01",
        "2026-09-15",
    )
    assert (
        "unchanged on 2026-09-15 per AutoDL machine list" in a100.source
        and "member price 3.28" in a100.source
    )


@pytest.mark.parametrize("gpu", ["L20", "H20"])
def test_the_quote_passes_over_what_its_provider_no_longer_lists(run_cli, gpu):
    out = json.loads(
        run_cli("quote", "--gpu", gpu, "--hours", "300", "--top", "20", "--format", "json").stdout
    )
    assert out["recommendation"]["unlisted_at"] is None
    assert out["recommendation"]["provider"] in {"aliyun", "autodl"}
    unlisted = {o["provider"] for o in out["options"] if o["unlisted_at"]}
    assert unlisted == ({"autodl"} if gpu == "L20" else {"tencent"})


def test_volcengine_ml_platform_prices_are_named_as_queue_prices_not_instances():
    volc = [r for r in rows() if r["provider"] == "volcengine" and r["observed_at"] >= "2026-01-01"]
    assert volc and all(r["instance_type"].startswith("veMLP general queue ") for r in volc)
    assert all(
        r["instance_type"].endswith("(per GPU)") and "not an ECS instance" in r["source"] for r in volc
    )
    (l20,) = [r for r in volc if r["gpu_model"] == "L20-48GB"]
    assert (l20["instance_type"], l20["price"], l20["region"]) == (
        "veMLP general queue L20*1 (per GPU)",
        "30",
        "cn-beijing/cn-shanghai",
    )


def test_the_contradicted_volcengine_l20_is_left_out():
    volc = [r for r in rows() if r["provider"] == "volcengine"]
    assert not [r for r in volc if r["price"] == "17.5"]
    assert not [r for r in volc if "instance (type not stated)" in r["instance_type"]]


@needs_shared_data
def test_the_build_says_what_it_left_out_and_why():
    from planner.ingest import snapshot_build

    _, left_out = snapshot_build.build_with_notes(SHARED_DATA)
    (l20,) = [line for line in left_out if line.startswith("volcengine L20 instance (type not stated) 17.5")]
    assert "contradicted by Volcengine's own veMLP price table (L20 30.00" in l20
    assert any(
        line.startswith("market (SMM) ") and "not a per-hour cloud rental" in line for line in left_out
    )
    assert any(line.startswith("ctyun ") and "not a provider the planner knows" in line for line in left_out)
    assert any(line.startswith("lifangyun ") for line in left_out)
    assert any("purchase price" in line for line in left_out)
    assert any(line.startswith("autodl H20-NVLink 6.98 (2026-03-28): a member price") for line in left_out)


def test_autodl_rows_are_list_prices_with_the_member_price_in_the_source():
    data = rows()
    newest = latest(data)
    h20 = newest[("autodl", "unspecified", "H20-NVLink", "on_demand")]
    assert (h20["price"], h20["observed_at"]) == ("10.5", "2026-09-15")  # the September list price
    assert "list price (原价)" in h20["source"] and "member price 9.98" in h20["source"]
    pro6000 = newest[("autodl", "unspecified", "RTX PRO 6000", "on_demand")]
    assert (pro6000["price"], pro6000["observed_at"]) == ("7.35", "2026-09-15")
    autodl = [r for r in data if r["provider"] == "autodl"]
    assert not [r for r in autodl if "[member price" in r["source"]]  # a source calling itself member prices
    assert not [
        r
        for r in autodl
        if r["instance_type"] == "H20-NVLink"
        and r["price"] in ("6.98", "9.98")
        and r["observed_at"] == "2026-03-28"
    ]
    # A figure after the full list equal to its member price is a member price, not a row.
    assert not [r for r in autodl if r["instance_type"] == "A800-80GB" and r["price"] == "5.59"]
    assert newest[("autodl", "unspecified", "A800-80GB", "on_demand")]["price"] == "5.88"


def test_only_known_providers_per_hour_rentals_and_leases_of_their_own_become_rows():
    assert {r["provider"] for r in rows()} == {"aliyun", "tencent", "volcengine", "autodl"}
    assert not [r for r in rows() if "8-GPU server" in r["instance_type"] or r["billing"] == "purchase"]
