"""The harness.toml of a Telegram bot that runs as its own process behind its own webhook server
(tests/channels/test_bots.py, tests/test_ptb_conversation.py)."""

from __future__ import annotations

import json
from pathlib import Path

TELEGRAM = """
[target]
name = "{name}"
command = {command}
cwd = "{cwd}"
port = 0
telegram_webhook = "http://127.0.0.1:{{port}}/telegram"
[target.env]
PORT = "{{port}}"
TELEGRAM_API_BASE = "{{telegram_api}}"
TELEGRAM_BOT_TOKEN = "{{bot_token}}"
TELEGRAM_WEBHOOK_SECRET = "{{webhook_secret}}"
{extra}
[sandbox]
settle_s = 0.3
reply_timeout_s = {reply_timeout_s}
"""


def telegram_bot_config(name: str, command: list[str | Path], cwd: Path, *, extra: str = "",
                        reply_timeout_s: float = 4) -> str:
    """``extra``: more [target.env] lines (TOML)."""
    return TELEGRAM.format(name=name, command=json.dumps([str(c) for c in command]), cwd=cwd, extra=extra,
                           reply_timeout_s=reply_timeout_s)
