"""A fixed ``[target].port`` that another process already answers on is refused (exit 4) before
the target starts: the other process's ``ready_url`` 200 must never make the harness judge it
in the target's place (issue 24)."""

from __future__ import annotations

import http.server
import os
import json
import socket
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class _Yesterday(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - http.server's name
        body = json.dumps({"version": "yesterdays-bot"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):  # noqa: N802
        self.do_GET()

    def log_message(self, *args):
        pass


def test_a_port_another_process_answers_on_is_refused(tmp_path: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Yesterday)
    port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        bot = tmp_path / "bot.py"  # would die on "address in use"
        bot.write_text("import socket, sys\ns = socket.socket()\ns.bind(('127.0.0.1', int(sys.argv[1])))\n"
                       "s.listen()\nimport time\ntime.sleep(60)\n")
        (tmp_path / "fixtures" / "robustness").mkdir(parents=True)
        (tmp_path / "fixtures" / "robustness" / "a.yaml").write_text(
            "layer: robustness\ncases:\n  - id: a\n    send: hi\n    expect: {replies: {min: 1}}\n")
        (tmp_path / "harness.toml").write_text(textwrap.dedent(f"""
            [target]
            name = "fixed-port"
            command = ["python", "{bot}", "{port}"]
            port = {port}
            ready_url = "http://127.0.0.1:{port}/healthz"
            telegram_webhook = "http://127.0.0.1:{port}/telegram"
            ready_timeout_s = 5
        """))
        done = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--out", str(tmp_path / "reports")],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    finally:
        server.shutdown()
        server.server_close()
    assert done.returncode == 4, (done.returncode, done.stdout, done.stderr)
    assert f"something already answers at 127.0.0.1:{port}" in done.stderr
    assert "port = 0" in done.stderr
    runs = list((tmp_path / "reports").glob("*/results.json"))
    assert not runs or "yesterdays-bot" not in runs[0].read_text()


def test_a_free_fixed_port_still_starts(tmp_path: Path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    from harness.config import load_config
    from harness.targets.http import HttpTarget

    (tmp_path / "harness.toml").write_text(textwrap.dedent(f"""
        [target]
        name = "fixed-port"
        command = ["python", "-c", "pass"]
        port = {port}
        ready_url = "http://127.0.0.1:{port}/healthz"
    """))
    target = HttpTarget(load_config(tmp_path / "harness.toml", environ={}))
    target._refuse_taken_ports(target._values({}))  # nothing listens: no refusal


def test_a_process_that_binds_the_port_after_the_harness_looked_is_refused(tmp_path: Path):
    """The race the look before the start cannot close: yesterday's bot (here a server in this
    test's process, started long before the target) binds the fixed port only once the target
    runs; the target fails its bind and stays up. Its ready_url answers 200 from the other
    process: the harness must refuse it (exit 4), not judge it."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    go = tmp_path / "go"
    servers: list = []

    def squat() -> None:
        for _ in range(1200):
            if go.exists():
                server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Yesterday)
                servers.append(server)
                server.serve_forever()
                return
            threading.Event().wait(0.05)

    threading.Thread(target=squat, daemon=True).start()
    bot = tmp_path / "bot.py"  # lets the other process in first, fails its bind, keeps running
    bot.write_text(textwrap.dedent(f"""
        import pathlib, socket, sys, time
        pathlib.Path({str(go)!r}).touch()
        for _ in range(400):
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", {port}))
        except OSError as exc:
            print("bind failed:", exc, flush=True)
        time.sleep(60)
    """))
    (tmp_path / "fixtures" / "robustness").mkdir(parents=True)
    (tmp_path / "fixtures" / "robustness" / "a.yaml").write_text(
        "layer: robustness\ncases:\n  - id: a\n    send: hi\n    expect: {replies: {min: 1}}\n")
    (tmp_path / "harness.toml").write_text(textwrap.dedent(f"""
        [target]
        name = "fixed-port"
        command = ["python", "{bot}"]
        port = {port}
        ready_url = "http://127.0.0.1:{port}/healthz"
        telegram_webhook = "http://127.0.0.1:{port}/telegram"
        ready_timeout_s = 20
    """))
    try:
        done = subprocess.run([sys.executable, "-m", "harness.cli", "run", "--out", str(tmp_path / "reports")],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120,
                              env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "HOME": str(tmp_path)})
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()
    assert servers, "the other process never bound the port"
    assert done.returncode == 4, (done.returncode, done.stdout, done.stderr)
    assert f"port {port} is answered by process {os.getpid()}" in done.stderr, done.stderr
    assert "which was running before the target started" in done.stderr and "Traceback" not in done.stderr
    runs = list((tmp_path / "reports").glob("*/results.json"))
    assert not runs or "yesterdays-bot" not in runs[0].read_text()
