"""A killed run keeps every case it had finished: results.jsonl is written as cases finish."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.report.journal import read_journal

ROOT = Path(__file__).resolve().parents[1]


def test_journal_survives_sigkill(tmp_path):
    fixtures = tmp_path / "fixtures" / "robustness"
    fixtures.mkdir(parents=True)
    (tmp_path / "fixtures" / "documents").mkdir()
    cases = "layer: robustness\ncases:\n" + "".join(
        f'  - id: slow-{i}\n    send: "m{i}"\n    expect: {{reply: {{contains: "m{i}"}}}}\n' for i in range(20))
    (fixtures / "slow.yaml").write_text(cases)
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "echo"\ninprocess = "tests.agents.echo:make_app"\n'
                   '[sandbox]\nsettle_s = 0.1\nreply_timeout_s = 5\nconcurrency = 1\n'
                   '[target.env]\nTELEGRAM_API_BASE = "{telegram_api}"\nTELEGRAM_BOT_TOKEN = "{bot_token}"\n'
                   'TELEGRAM_WEBHOOK_SECRET = "{webhook_secret}"\nWHATSAPP_API_BASE = "{whatsapp_api}"\n'
                   'WHATSAPP_PHONE_NUMBER_ID = "{phone_number_id}"\nWHATSAPP_TOKEN = "{whatsapp_token}"\n'
                   'WHATSAPP_APP_SECRET = "{app_secret}"\nECHO_MODE = "slow"\n')
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "harness.cli", "run", "--config", str(cfg), "--out", str(out),
                             "--quiet"], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    journal = None
    deadline = time.time() + 60
    try:
        while time.time() < deadline:
            found = list(out.glob("*/results.jsonl"))
            if found and len(found[0].read_text().splitlines()) >= 3:
                journal = found[0]
                break
            time.sleep(0.1)
        assert journal is not None, "no cases finished in time"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    rows = read_journal(journal)
    assert 3 <= len(rows) < 20
    assert all(r["status"] == "pass" and r["evidence"] for r in rows)
    assert [r["id"] for r in rows] == [f"slow-{i}" for i in range(len(rows))]
    assert not (journal.parent / "results.json").exists()  # the run never finished
    for line in journal.read_text().splitlines():
        json.loads(line)
