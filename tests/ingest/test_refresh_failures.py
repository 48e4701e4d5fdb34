"""Failure injection: each provider breaking in its own way (500s, HTML instead of JSON, a renamed field,
an expired AutoDL token, garbage, a refused connection, a server answering 500) ends in a failed run
with a readable error, while the other providers store fine and earlier history stays intact. Secrets
never reach output, run rows or saved raw files."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import socket
import threading
from pathlib import Path

import pytest
import responses
from sqlalchemy import select

from db import queries
from db.schema import scrape_runs
from planner.providers import PROVIDERS
from tests.helpers.db_checks import stored_by_provider
from tests.helpers.db_edits import age_everything
from tests.helpers.replay import (
    EXPECTED_STORED,
    FIXTURES,
    RAW,
    break_autodl_expired_token,
    make_config,
    outcome,
    recordings,
    refresh,
    replay_copy,
    set_status,
)


def _html(body: Path) -> None:
    body.write_bytes(b"<!DOCTYPE html><html><body>please log in</body></html>")


def break_aliyun_with_html(folder: Path) -> None:
    for body in recordings(folder, "aliyun", "instancePrice.json"):
        _html(body)


def break_tencent_with_500s(folder: Path) -> None:
    for body in recordings(folder, "tencent", "/cgi/api"):
        set_status(body, 500)
        body.write_bytes(b"internal error")


def break_volcengine_renamed_field(folder: Path) -> None:
    for body in recordings(folder, "volcengine", "trade/price", method="POST"):
        body.write_bytes(body.read_bytes().replace(b'"PriceInfoList"', b'"PriceList"'))


def break_autodl_unknown_gpus(folder: Path) -> None:
    for body in recordings(folder, "autodl", "machine/search"):
        page = json.loads(body.read_bytes())
        for item in page["data"]["list"]:
            item["gpu_name"] = "Mystery 9000"
        body.write_text(json.dumps(page), encoding="utf-8")


CASES = [
    ("aliyun", break_aliyun_with_html, "did not return JSON"),
    ("tencent", break_tencent_with_500s, "every one of 3 region/zone calls failed"),
    (
        "volcengine",
        break_volcengine_renamed_field,
        "no PriceInfoList anywhere in the answer (shape changed?)",
    ),
    ("autodl", break_autodl_expired_token, "log in again and refresh AUTODL_TOKEN"),
    ("autodl", break_autodl_unknown_gpus, "none of the 4 offers could be stored"),
]


@pytest.mark.parametrize("broken, breaker, message", CASES, ids=[c[1].__name__ for c in CASES])
def test_a_broken_provider_fails_alone_and_keeps_its_history(engine, tmp_path, broken, breaker, message):
    first = refresh(engine, tmp_path, from_raw=RAW)
    assert first.exit_code == 0
    age_everything(engine)  # yesterday's refresh
    folder = replay_copy(tmp_path)
    breaker(folder)
    summary = refresh(engine, tmp_path, from_raw=folder)
    assert summary.exit_code == 1
    failed = outcome(summary, broken)
    assert failed.status == "failed" and message in failed.error, failed.error
    assert (failed.stored, failed.changed) == (0, 0)
    for other in summary.outcomes:
        if other.provider != broken:
            # The same prices again: each confirms yesterday's (prices are levels), none is added.
            assert (other.status, other.stored, other.already_present) == (
                "ok",
                0,
                EXPECTED_STORED[other.provider],
            )
    counts = stored_by_provider(engine)
    assert counts[broken] == EXPECTED_STORED[broken]  # yesterday's prices, nothing added or removed
    assert all(counts[p] == n for p, n in EXPECTED_STORED.items() if p != broken)
    with engine.connect() as conn:
        latest = queries.latest_prices(conn, providers=[broken])
        run = conn.execute(select(scrape_runs).where(scrape_runs.c.id == failed.run_id)).mappings().one()
    yesterday = dt.date.today() - dt.timedelta(days=1)
    assert latest and {p.observed_at.date() for p in latest} == {yesterday}  # the last good prices stay
    assert (run["status"], run["prices_stored"]) == ("failed", 0)
    assert message in run["error"] and run["finished_at"] is not None


def test_one_zone_answering_html_makes_a_partial_run_that_exits_0(engine, tmp_path, run_cli):
    folder = replay_copy(tmp_path)
    zones = recordings(folder, "tencent", "/cgi/api")
    _html(zones[-1])  # the last zone answers a captcha page
    summary = refresh(engine, tmp_path, from_raw=folder)
    tencent = outcome(summary, "tencent")
    assert tencent.status == "partial" and "did not return JSON" in tencent.error
    assert 0 < tencent.stored < EXPECTED_STORED["tencent"]
    assert summary.exit_code == 0
    result = run_cli("refresh", "--from-raw", str(folder))
    assert result.exit_code == 0 and "partial" in result.stdout


def test_cli_exit_code_1_and_a_summary_that_names_the_failure(run_cli, tmp_path):
    folder = replay_copy(tmp_path)
    break_autodl_expired_token(folder)
    result = run_cli("refresh", "--from-raw", str(folder))
    assert result.exit_code == 1
    assert "log in again and refresh AUTODL_TOKEN" in result.stdout
    assert "Exit code 1: autodl failed" in result.stdout
    assert "autodl: failed after" in result.stderr
    doc = json.loads(run_cli("refresh", "--from-raw", str(folder), "--format", "json").stdout)
    assert doc["exit_code"] == 1
    assert {o["provider"]: o["status"] for o in doc["outcomes"]}["autodl"] == "failed"
    csv_out = run_cli("refresh", "--from-raw", str(folder), "--format", "csv").stdout.splitlines()
    assert csv_out[0].startswith("provider,status,mode,offers,stored,changed") and len(csv_out) == 1 + len(
        PROVIDERS
    )


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize(
    "provider, where",
    [
        ("aliyun", "instancePrice.json failed after 1 attempts: refused"),
        ("tencent", "queryCvmRegion failed after 1 attempts: refused"),
        ("volcengine", "Action=ListTemplate"),
        ("autodl", "gpu_type failed after 1 attempts: refused"),
    ],
)
def test_connection_refused_is_a_readable_failure(engine, tmp_path, provider, where):
    port = _closed_port()
    config = make_config(tmp_path, providers={provider: {"base_url": f"http://127.0.0.1:{port}"}})
    summary = refresh(engine, tmp_path, config, providers=[provider])
    failed = outcome(summary, provider)
    assert failed.status == "failed" and summary.exit_code == 1
    assert where in failed.error and "Traceback" not in failed.error, failed.error
    assert f"http://127.0.0.1:{port}/" in failed.error  # the mirror actually asked, not the real host
    assert stored_by_provider(engine) == {}


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True


def _serve(routes: dict[str, bytes] | None):
    """A loopback HTTP server: ``routes`` path -> body (200), anything else 500; None = always 500."""

    class Handler(http.server.BaseHTTPRequestHandler):
        disable_nagle_algorithm = True  # headers and body leave at once (no 40 ms delayed-ACK stall)

        def _answer(self) -> None:
            body = (routes or {}).get(self.path.split("?")[0])
            self.send_response(200 if body is not None else 500)
            self.end_headers()
            self.wfile.write(body if body is not None else b"<html>500 Internal Server Error</html>")

        do_GET = do_POST = _answer

        def log_message(self, *args) -> None:
            pass

    server = _Server(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True).start()
    return server


def test_done_when_a_provider_behind_base_url_answers_500(run_cli, tmp_path, engine):
    cdn = (FIXTURES / "aliyun" / "instancePrice_2.0.300.constructed.json").read_bytes()
    page = (FIXTURES / "aliyun" / "pricing_page.constructed.html").read_bytes()
    aliyun = _serve(
        {
            "/price/ecs/ecs-pricing/zh": page,
            "/aliyun/ecs-price-info/2.0.300/price/download/instancePrice.json": cdn,
        }
    )
    tencent = _serve(None)
    try:
        # Yesterday's Tencent prices, from the replay, must survive tonight's failure.
        refresh(engine, tmp_path, from_raw=RAW, providers=["tencent"])
        age_everything(engine)
        config = tmp_path / "config.toml"
        config.write_text(
            "[http]\nretries = 1\nbackoff_s = 0.0\n"
            f'[providers.aliyun]\nbase_url = "http://127.0.0.1:{aliyun.server_port}"\nmin_interval_s = 0.0\n'
            f'[providers.tencent]\nbase_url = "http://127.0.0.1:{tencent.server_port}"\nmin_interval_s = 0.0\n',
            encoding="utf-8",
        )
        result = run_cli("--config", str(config), "refresh", "--provider", "aliyun", "--provider", "tencent")
    finally:
        aliyun.shutdown()
        tencent.shutdown()
    assert result.exit_code == 1, result.output
    assert "returned HTTP 500 after 2 attempts" in result.stdout
    assert "Exit code 1: tencent failed" in result.stdout
    counts = stored_by_provider(engine)
    assert counts["aliyun"] == EXPECTED_STORED["aliyun"]
    assert counts["tencent"] == EXPECTED_STORED["tencent"]  # yesterday's, intact


SECRETS = {
    "AUTODL_TOKEN": "eyJhbGciOiJIUzI1NiJ9.s3cr3t-autodl-session",
    "TENCENTCLOUD_SECRET_ID": "AKIDs3cr3tTencentId0001",
    "TENCENTCLOUD_SECRET_KEY": "s3cr3t-tencent-key-value",
}


def test_secrets_never_reach_output_run_rows_or_raw_files(
    run_cli, tmp_path, monkeypatch, engine, no_pause_between_requests
):
    from scrapers.providers.autodl import GPU_TYPE_URL, REGION_URL, SEARCH_URL
    from scrapers.providers.tencent import API_URL

    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    error = {"Response": {"Error": {"Code": "AuthFailure.SecretIdNotFound",
                                    "Message": f"SecretId {SECRETS['TENCENTCLOUD_SECRET_ID']} not found"}}}  # fmt: skip
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        rsps.get(GPU_TYPE_URL, body=(FIXTURES / "autodl" / "gpu_type.json").read_bytes())
        rsps.get(REGION_URL, body=(FIXTURES / "autodl" / "region_list.json").read_bytes())
        rsps.post(SEARCH_URL, status=401, json={"msg": f"token {SECRETS['AUTODL_TOKEN']} expired"})
        rsps.post(API_URL, json=error)
        raw = tmp_path / "saved"
        result = run_cli("refresh", "--provider", "autodl", "--provider", "tencent", "--save-raw", str(raw))
        json_result = run_cli("refresh", "--provider", "autodl", "--provider", "tencent", "--format", "json")
        sent = [c.request for c in rsps.calls]
    assert result.exit_code == 1
    assert any(r.headers.get("Authorization") == SECRETS["AUTODL_TOKEN"] for r in sent)  # it was used
    texts = [result.stdout, result.stderr, json_result.stdout, json_result.stderr]
    texts += [
        run_cli(*args).stdout for args in (("runs", "--format", "json"), ("providers", "--format", "json"))
    ]
    texts += [run_cli("providers").stdout]
    with engine.connect() as conn:
        texts += [json.dumps([dict(r) for r in conn.execute(select(scrape_runs)).mappings()], default=str)]
    texts += [p.read_text(errors="replace") for p in raw.rglob("*") if p.is_file()]
    assert "log in again and refresh AUTODL_TOKEN" in result.stdout
    assert "AuthFailure.SecretIdNotFound" in result.stdout
    for secret in SECRETS.values():
        assert not any(secret in text for text in texts), secret
