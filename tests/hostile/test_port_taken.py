"""A fixed ``[target].port`` that another process already answers on is refused (exit 4) before
the target starts: the other process's ``ready_url`` 200 must never make the harness judge it
in the target's place (issue 24)."""

from __future__ import annotations

import http.server
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
