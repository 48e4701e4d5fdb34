"""The slow group's hostile-input matrix: the planner run as a user runs it (a separate process, a
fresh HOME), against a gzip bomb, a dripping and a silent SMTP server, a hostile replay folder and
planted symbolic links. Each must end in bounded time and memory, with one readable line, leaking
nothing and writing through no link.

The fast tests of each class are in ``test_reliability_hangs.py``, ``test_security_replay.py`` and
``test_security_writes.py``; these run the whole command, measure the process and check every output.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.hostile_files import (
    LOCAL_SECRET,
    _fifo,
    _link_to_dev_zero,
    _link_to_local_file,
    _oversized,
)
from tests.helpers.replay import RAW, recordings, replay_copy
from tests.helpers.servers import gzip_bomb, http_server
from tests.helpers.smtp import SmtpScript

pytestmark = pytest.mark.slow

BOMB_PEAK_RSS_LIMIT_MB = 500  # four providers at once, each stopped at 64 MB decoded (measured ~300)


# Starts planner and writes its peak RSS (KB) to argv[1]. A child's ru_maxrss counts what it shared with
# its parent before exec; forked from this small launcher, that is a few MB, where forked from pytest it
# would be the whole test process (about 540 MB late in a full slow-group run, against ~300 MB alone).
LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(str(usage.ru_maxrss))
code = os.waitstatus_to_exitcode(status)
sys.exit(code if code >= 0 else 128 - code)
"""


def run_planner(workdir: Path, *args: str, timeout_s: float = 180, **env: str) -> tuple[int, str, str, float]:
    """``planner ARGS`` in its own process from ``workdir``: (exit code, stdout, stderr, peak RSS MB)."""
    environment = {**os.environ, "PLANNER_DATA_DIR": str(workdir / "data"), "HOME": str(workdir), **env}
    for name in ("PLANNER_DATABASE_URL", "PLANNER_CONFIG"):
        environment.pop(name, None)
    peak_file = workdir / ".peak_rss_kb"
    planner = [sys.executable, "-m", "planner", "--db", f"sqlite:///{workdir / 'p.db'}", *args]
    process = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, str(peak_file), *planner],
        cwd=workdir,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # the launcher and planner: one group, killed together
    )
    # a hang fails the test instead of the suite
    timer = threading.Timer(timeout_s, lambda: os.killpg(process.pid, signal.SIGKILL))
    timer.start()
    try:
        stdout, stderr = process.communicate()
    finally:
        timer.cancel()
    assert process.returncode != -9, f"planner {' '.join(args)} hung and was killed after {timeout_s} s"
    peak = int(peak_file.read_text()) / 1024
    peak_file.unlink()
    return process.returncode, stdout.decode(), stderr.decode(), peak


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


def test_gzip_bomb_from_every_provider_at_once_stays_in_memory_bounds(workdir):
    config = workdir / "bomb.toml"
    with http_server(gzip_bomb(), {"Content-Encoding": "gzip", "Content-Type": "application/json"}) as base:
        lines = ["[http]", "retries = 0"]
        for provider in ("aliyun", "tencent", "volcengine", "autodl"):
            lines += [f"[providers.{provider}]", f"base_url = '{base}'", "min_interval_s = 0.0"]
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        code, stdout, stderr, peak_mb = run_planner(
            workdir,
            "--config",
            str(config),
            "refresh",
            "--save-raw",
            str(workdir / "raw"),
            AUTODL_TOKEN="t0ken-123456",
        )
    assert code == 1 and "Traceback" not in stderr, stderr
    assert stderr.count("(decoded): refused") >= 2, stderr  # Volcengine and AutoDL fail on it outright
    print(f"gzip bomb: peak RSS {peak_mb:.0f} MB")
    assert peak_mb < BOMB_PEAK_RSS_LIMIT_MB, f"peak RSS {peak_mb:.0f} MB"
    saved = sum(p.stat().st_size for p in (workdir / "raw").rglob("*") if p.is_file())
    assert saved < 2**20, f"--save-raw wrote {saved} bytes"


def test_hostile_replay_folder_every_class_at_once(workdir, tmp_path):
    folder = replay_copy(tmp_path)
    _link_to_local_file(recordings(folder, "aliyun", "instancePrice.json")[0], tmp_path)
    _fifo(recordings(folder, "tencent", "/cgi/api")[-1], tmp_path)
    _link_to_dev_zero(recordings(folder, "volcengine", "trade/price")[0], tmp_path)
    _oversized(recordings(folder, "autodl", "machine/search")[0], tmp_path)
    started = time.monotonic()
    code, stdout, stderr, _ = run_planner(workdir, "refresh", "--from-raw", str(folder), timeout_s=120)
    assert code == 1 and "Traceback" not in stderr, stderr
    assert time.monotonic() - started < 60
    assert stderr.count("refused") >= 4, stderr
    runs = run_planner(workdir, "runs", "--format", "json", "--limit", "50")
    report = run_planner(workdir, "report", "--out", str(workdir / "report"))
    health = "".join(p.read_text(encoding="utf-8") for p in (workdir / "report").glob("*.csv"))
    for text in (stdout, stderr, runs[1], runs[2], report[1], report[2], health):
        assert LOCAL_SECRET not in text


def test_hostile_replay_manifest_cannot_rewrite_a_file(workdir, tmp_path):
    import json

    folder = replay_copy(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("keep\n", encoding="utf-8")
    doc = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    doc["providers"]["aliyun"]["options"]["state_path"] = str(victim)
    (folder / "manifest.json").write_text(json.dumps(doc), encoding="utf-8")
    code, _, stderr, _ = run_planner(workdir, "refresh", "--from-raw", str(folder))
    assert code == 2 and "state_path" in stderr and "Hint:" in stderr
    assert victim.read_text(encoding="utf-8") == "keep\n"
    (folder / "manifest.json").unlink()
    code, _, stderr, _ = run_planner(workdir, "refresh", "--from-raw", str(folder))
    assert code == 2 and "has no manifest.json" in stderr


def test_planted_symlinks_every_write_path(workdir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep\n", encoding="utf-8")
    # the refresh lock, beside the database
    lock = workdir / "p.db.refresh.lock"
    lock.symlink_to(victim)
    code, _, stderr, _ = run_planner(workdir, "refresh", "--from-raw", str(RAW))
    assert code != 0 and "symbolic link" in stderr and "Traceback" not in stderr
    lock.unlink()
    # every file --save-raw writes, under the names the first save used
    code, *_ = run_planner(workdir, "refresh", "--from-raw", str(RAW), "--save-raw", str(tmp_path / "first"))
    assert code == 0
    planted = tmp_path / "planted"
    for path in (tmp_path / "first").rglob("*"):
        if path.suffix == ".body" or path.name == "manifest.json":  # .json sidecars would shift the count
            target = planted / path.relative_to(tmp_path / "first")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(victim)
    code, _, stderr, _ = run_planner(workdir, "refresh", "--from-raw", str(RAW), "--save-raw", str(planted))
    assert code == 1 and "not overwritten" in stderr
    assert not (planted / "manifest.json").is_symlink()  # replaced by the real manifest, not written through
    # the report's files
    out = workdir / "report"
    code, *_ = run_planner(workdir, "report", "--out", str(out))
    names = [p.name for p in out.iterdir()]
    for name in names:
        (out / name).unlink()
        (out / name).symlink_to(victim)
    code, _, stderr, _ = run_planner(workdir, "report", "--out", str(out))
    assert code == 0, stderr
    assert not any((out / name).is_symlink() for name in names)
    assert victim.read_text(encoding="utf-8") == "keep\n"


def test_planted_symlinks_export_onto_a_fifo(workdir):
    fifo = workdir / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    code, _, stderr, _ = run_planner(workdir, "export", "--out", str(fifo))
    reader.join(timeout=30)
    assert code == 0, stderr
    assert received and received[0].startswith(b"provider,")
    assert fifo.is_fifo()


@pytest.mark.parametrize("mode", ["drip", "silent_after_data"])
def test_misbehaving_smtp_server_under_the_nightly_job(workdir, mode):
    server = SmtpScript(mode)
    try:
        config = workdir / "mail.toml"
        config.write_text(
            "[email]\nsmtp_host = '127.0.0.1'\n"
            f"smtp_port = {server.port}\nstarttls = false\ndeadline_s = 2.0\n"
            "recipients = ['ml@example.com']\n[schedule]\nemail = true\n"
            "[refresh]\nprovider_timeout_s = 30\n[http]\nretries = 0\nconnect_timeout_s = 1\n"
            "[providers.aliyun]\nenabled = false\n[providers.tencent]\nenabled = false\n"
            "[providers.volcengine]\nenabled = false\n[providers.autodl]\nenabled = false\n",
            encoding="utf-8",
        )
        started = time.monotonic()
        code, _, stderr, _ = run_planner(
            workdir, "--config", str(config), "schedule", "--once", timeout_s=120
        )
        elapsed = time.monotonic() - started
    finally:
        server.close()
    assert code == 1 and "Traceback" not in stderr, stderr
    if mode == "drip":
        assert "did not finish answering within 2 s" in stderr
        assert elapsed < 60  # three attempts of 2 s and the pauses between them
    else:
        assert server.messages == 1 and "did not confirm it" in stderr
