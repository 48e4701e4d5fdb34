"""--save-raw writes every response without secrets; --from-raw replays a folder with no network."""

from __future__ import annotations

import json

import pytest

from scrapers.base import ScrapeError
from scrapers.recording import match_key, redact_url

URL = "https://cvm.tencentcloudapi.com/"


def test_save_raw_writes_body_and_sidecar_without_secrets(rsps, make_client, tmp_path):
    secret = "TOPSECRETvalue42"
    rsps.post(URL, json={"Response": {"echo": secret, "RequestId": "r"}})
    client = make_client(save_raw_dir=tmp_path, secrets=[secret])
    client.post(
        URL,
        params={"Signature": "sig123", "Region": "ap-beijing", "Token": "tok"},
        json_body={"Filters": [], "SecretKey": secret, "AccessKeyId": "AK1"},
        headers={"Authorization": "TC3 secret-header"},
    )
    files = sorted(p.name for p in (tmp_path / "tencent").iterdir())
    assert len(files) == 2 and files[0].endswith(".body") and files[1].endswith(".json")
    assert all(name.startswith("0001-POST-") for name in files)
    everything = "".join((tmp_path / "tencent" / f).read_text() for f in files)
    for leaked in (secret, "sig123", "tok", "AK1", "secret-header"):
        assert leaked not in everything
    meta = json.loads((tmp_path / "tencent" / files[1]).read_text())
    assert meta["method"] == "POST" and meta["status"] == 200 and meta["url"] == URL
    assert meta["params"] == {"Signature": "***", "Region": "ap-beijing", "Token": "***"}
    assert meta["request_body"]["SecretKey"] == "***" and meta["request_body"]["Filters"] == []


def test_file_names_never_come_from_provider_data(rsps, make_client, tmp_path):
    evil = "https://cvm.tencentcloudapi.com/../../etc/passwd"
    rsps.get(evil, json={})
    make_client(save_raw_dir=tmp_path).get(evil, params={"x": "../../y"})
    names = [p.name for p in (tmp_path / "tencent").iterdir()]
    assert all(n.startswith("0001-GET-") and "/" not in n and ".." not in n.split("-")[0] for n in names)
    assert not (tmp_path / "etc").exists()


def test_from_raw_replays_in_order_and_without_network(rsps, make_client, tmp_path, clock):
    rsps.get(URL, status=500, body="oops")
    rsps.get(URL, json={"n": 2})
    make_client(save_raw_dir=tmp_path).get(URL, params={"a": "1"})
    rsps.reset()  # from here any real request would fail: nothing is registered
    replay = make_client(from_raw_dir=tmp_path)
    clock.sleeps.clear()
    assert replay.get(URL, params={"a": "1"}).json() == {"n": 2}  # the recorded 500 is retried, then 200
    assert clock.sleeps == []  # replay never sleeps
    assert replay.get(URL, params={"a": "1"}).json() == {"n": 2}  # last recording repeats
    assert len(rsps.calls) == 0


def test_replay_of_an_unrecorded_request_is_a_scrape_error(make_client, tmp_path):
    (tmp_path / "tencent").mkdir()
    with pytest.raises(ScrapeError, match="no recorded response for GET"):
        make_client(from_raw_dir=tmp_path).get(URL, params={"a": "2"})


def test_replay_matches_through_base_url_and_ignores_volatile_params(rsps, make_client, tmp_path):
    rsps.get("http://localhost:1/", json={"ok": True})
    make_client(save_raw_dir=tmp_path, base_url="http://localhost:1").get(
        URL, params={"a": "1", "Timestamp": "111", "Signature": "x"}
    )
    replay = make_client(from_raw_dir=tmp_path)
    assert replay.get(URL, params={"Signature": "y", "a": "1", "Timestamp": "222"}).json() == {"ok": True}


def test_match_key_depends_on_body_method_host_and_query():
    base = match_key("POST", URL + "?a=1&b=2", b"{}")
    assert base == match_key("post", URL + "?b=2&a=1", b"{}")
    assert base != match_key("POST", URL + "?a=1&b=2", b'{"x":1}')
    assert base != match_key("GET", URL + "?a=1&b=2", b"{}")
    assert base != match_key("POST", "https://other.host/?a=1&b=2", b"{}")
    assert base != match_key("POST", URL + "?a=1&b=3", b"{}")


def test_a_key_id_in_the_query_is_redacted_and_not_matched():
    # UCloud (CompShare) sends its key id as PublicKey: a replay signs with a placeholder key.
    recorded = match_key("GET", URL + "?Action=A&PublicKey=real-id&Signature=abc", b"")
    assert recorded == match_key("GET", URL + "?Action=A&PublicKey=placeholder&Signature=def", b"")
    assert "real-id" not in redact_url(URL + "?Action=A&PublicKey=real-id")


def test_corrupt_sidecar_is_a_scrape_error(make_client, tmp_path):
    folder = tmp_path / "tencent"
    folder.mkdir()
    (folder / "0001-GET-abc.json").write_text("{not json")
    with pytest.raises(ScrapeError, match="unreadable recording"):
        make_client(from_raw_dir=tmp_path)
