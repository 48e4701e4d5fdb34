"""Loopback SMTP servers (a recording one, a misbehaving one) and an email config pointing at them."""

from __future__ import annotations

import contextlib
import email
import email.policy
import socket
import ssl
import threading
import time
from pathlib import Path

from aiosmtpd.controller import Controller


class Recorder:
    """An aiosmtpd handler that keeps what it receives; answers 451 to the first ``busy`` messages."""

    def __init__(self, busy: int = 0):
        self.messages: list[tuple[str, list[str], bytes]] = []
        self.busy = busy

    async def handle_DATA(self, server, session, envelope):  # noqa: ANN001, ANN201 - aiosmtpd hook
        if self.busy:
            self.busy -= 1
            return "451 4.3.0 busy, try again later"
        self.messages.append((envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content))
        return "250 OK"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def smtp_server(handler: Recorder, **kwargs):
    controller = Controller(handler, hostname="127.0.0.1", port=free_port(), **kwargs)
    controller.start()
    try:
        yield controller.port
    finally:
        controller.stop()


def server_context(certificate: tuple[Path, Path]) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*map(str, certificate))
    return context


def email_config(tmp_path: Path, port: int, chart: bool = False, **settings: object) -> Path:
    """A config file sending e-mail to the loopback server at ``port`` with ``settings``; the report's
    chart (about 0.1 s of matplotlib a report) only when asked for."""
    values = {"smtp_host": "127.0.0.1", "smtp_port": port, "starttls": False, "ssl": False}
    values.update(settings)
    lines = ["[email]"]
    for key, value in values.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, int):
            lines.append(f"{key} = {value}")
        elif isinstance(value, list):
            lines.append(f"{key} = [{', '.join(repr(v) for v in value)}]")
        else:
            lines.append(f"{key} = {value!r}")
    lines += ["[report]", f"chart = {'true' if chart else 'false'}"]
    path = tmp_path / "team.toml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def parse(raw: bytes) -> email.message.EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)


class SmtpScript:
    """A loopback SMTP server on a raw socket, misbehaving on purpose: ``drip`` sends continuation lines
    of its greeting forever; ``silent_after_data`` takes a whole message, then never answers."""

    def __init__(self, mode: str):
        self.mode = mode
        self.messages = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.stop = threading.Event()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._talk, args=(conn,), daemon=True).start()

    def _talk(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            if self.mode == "drip":
                while not self.stop.is_set():
                    conn.sendall(b"220-still saying hello\r\n")
                    time.sleep(0.05)
                return
            conn.sendall(b"220 test ESMTP\r\n")
            reader = conn.makefile("rb")
            while not self.stop.is_set():
                line = reader.readline()
                if not line:
                    return
                verb = line[:4].upper()
                if verb in (b"EHLO", b"HELO"):
                    conn.sendall(b"250 test\r\n")
                elif verb == b"DATA":
                    conn.sendall(b"354 go ahead\r\n")
                    while reader.readline() not in (b".\r\n", b""):
                        pass
                    self.messages += 1
                    self.stop.wait(60)  # the whole message arrived: say nothing
                    return
                elif verb == b"QUIT":
                    conn.sendall(b"221 bye\r\n")
                    return
                else:
                    conn.sendall(b"250 ok\r\n")

    def close(self) -> None:
        self.stop.set()
        self.sock.close()
