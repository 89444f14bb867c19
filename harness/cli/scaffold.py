"""``harness init``: a starting point for testing your own bot.

Writes a commented harness.toml for an external bot, one example case file per layer, a
sample document and a .gitignore for runs. Never overwrites: if any file exists, nothing
is written and the error names the files.

``--no-llm`` is for a bot without a language model or documents (a menu, a booking flow):
no reasoning example (a document summary), no sample document, no LLM gateway variable in
``[target.env]``, a cost example on latency alone instead of LLM calls, and the metamorphic
variants off (``[robustness] variants = "none"``).
"""

from __future__ import annotations

from pathlib import Path

from harness.errors import UsageError

CONFIG_HEAD = """\
# harness.toml: how the harness starts and talks to your bot.
# Every key can be overridden from the environment: HARNESS_<SECTION>_<KEY>
# (e.g. HARNESS_TARGET_COMMAND='[".venv/bin/python", "bot.py"]'). Secrets never go in this file.

[target]
name = "mybot"
# The command that starts your bot (run from this folder), with the bot's own interpreter: the
# python of the virtualenv that holds your bot's packages (python3 -m venv .venv, then
# .venv/bin/pip install them). The harness is installed apart (pipx, or a venv of its own);
# "python" as the first word would mean the harness's own interpreter instead.
# Remove `command` if your bot is already running; then set fixed URLs below.
command = [".venv/bin/python", "mybot.py"]
port = 0                       # 0: the harness picks a free port and fills in {port} below
# ready_url = "http://127.0.0.1:{port}/healthz"   # optional: polled until it answers 200;
                               # without it the harness waits until the webhook port accepts connections
# state_url = "http://127.0.0.1:{port}/state/{chat_id}"   # optional JSON state probe (multi-turn checks)
"""

TELEGRAM_TARGET = """\
telegram_webhook = "http://127.0.0.1:{port}/telegram"

# Passed to your bot's process. The harness runs its own Telegram Bot API on 127.0.0.1 and
# generates a bot token and webhook secret for each run: point your framework's Bot API base
# URL at {telegram_api} and your webhook's secret check at {webhook_secret}.
[target.env]
PORT = "{port}"
TELEGRAM_API_BASE = "{telegram_api}"
TELEGRAM_BOT_TOKEN = "{bot_token}"
TELEGRAM_WEBHOOK_SECRET = "{webhook_secret}"
OPENAI_BASE_URL = "{llm_base_url}"     # if your bot calls an OpenAI-compatible LLM: through the recording gateway
"""

WHATSAPP_TARGET = """\
whatsapp_webhook = "http://127.0.0.1:{port}/whatsapp"

# Passed to your bot's process. The harness runs its own Graph API on 127.0.0.1 and signs
# every webhook with an app secret it generates per run: point your client's Graph API base
# at {whatsapp_api} and its signature check at {app_secret}.
[target.env]
PORT = "{port}"
WHATSAPP_API_BASE = "{whatsapp_api}"
WHATSAPP_API_VERSION = "{whatsapp_api_version}"
WHATSAPP_PHONE_NUMBER_ID = "{phone_number_id}"
WHATSAPP_TOKEN = "{whatsapp_token}"
WHATSAPP_APP_SECRET = "{app_secret}"
WHATSAPP_VERIFY_TOKEN = "{verify_token}"
OPENAI_BASE_URL = "{llm_base_url}"     # if your bot calls an OpenAI-compatible LLM: through the recording gateway
"""

CONFIG_TAIL = """
[sandbox]
# Where the gateway forwards your bot's LLM calls (set HARNESS_LLM_API_KEY in the environment).
# llm_upstream = "https://api.openai.com/v1"
settle_s = 1.0          # a turn ends once the bot was quiet this long with its replies in
reply_timeout_s = 20    # longest wait for a turn's replies
concurrency = 4
"""

ROBUSTNESS = """\
layer: robustness
defaults: {{channel: {channel}}}
# What your bot must survive. Every case needs at least one check (see docs/CASES.md).
cases:
  - id: my-empty-message
    description: "an empty message gets a polite answer, not silence or a crash"
    send: ""
    expect:
      replies: {{min: 1, max: 1}}
      reply: {{not_contains: ["Traceback", "Exception"]}}
  - id: my-gibberish
    description: "gibberish gets one answer without an error"
    send: "asdkjh qwpoeiru zxmcnv"
    expect:
      replies: {{min: 1, max: 1}}
      reply: {{not_regex: "(?i)traceback|internal error"}}
  - id: my-long-paste
    description: "a 10,000-word paste does not crash the bot"
    send: "{{words:10000}}"
    expect:
      replies: {{min: 1}}
      reply: {{not_contains: ["Traceback"]}}
"""

MULTITURN = """\
layer: multiturn
defaults: {{channel: {channel}}}
# Conversations: each turn has its own checks.
cases:
  - id: my-two-turns
    description: "the bot answers every turn of a short conversation"
    turns:
      - send: "hello"
        expect: {{replies: {{min: 1}}}}
      - send: "thanks!"
        expect: {{replies: {{min: 1}}, reply: {{not_contains: ["Traceback"]}}}}
"""

REASONING = """\
layer: reasoning
defaults: {{channel: {channel}}}
# Documents plus instructions. {{docs}} serves fixtures/documents/ to your bot.
cases:
  - id: my-summary
    description: "a summary of the sample document mentions its main finding"
    send: "summarize {{docs}}/sample.txt in one sentence"
    expect:
      replies: {{min: 1}}
      reply: {{regex: "(?i)solar|panel", max_chars: 600}}
"""

COST = """\
layer: cost
defaults: {{channel: {channel}}}
# {purpose}: thresholds on what the sandbox measured.
cases:
  - id: my-fast-hello
    description: "{description}"
    send: "hello"
    expect:
      latency_ms: {{first_reply_max: {first_reply_max}}}
      {second_check}
"""
COST_WITH_LLM = dict(purpose="Speed and spend", description="a greeting is answered quickly and with few LLM calls",
                     first_reply_max=10000, second_check="llm_calls: {max: 2}")
COST_NO_LLM = dict(purpose="Speed", description="a greeting is answered quickly", first_reply_max=3000,
                   second_check="replies: {min: 1}")

SAMPLE_DOCUMENT = """\
Community solar pilot: first-year results

In its first year the neighbourhood solar pilot installed 120 rooftop panels on 30 homes.
The panels produced 41 megawatt-hours of electricity, which covered 38 percent of the
households' yearly use. Average bills fell by 22 percent. The main problem was a four-month
delay in grid connection permits.
"""

GITIGNORE = """\
# harness runs (results, reports, target logs)
reports/
.harness-cache/
"""


NO_LLM_ROBUSTNESS = """
[robustness]
# Metamorphic variants (typos, capitals, greetings... of every multi-turn request, which must get
# the same answer) suit a bot that reads free text; a menu or booking flow answers its own words.
# "default" turns them on (two kinds a case); a case's own `variants:` always wins.
variants = "none"
"""

LLM_ENV_LINE = 'OPENAI_BASE_URL = "{llm_base_url}"     # if your bot calls an OpenAI-compatible LLM: through the recording gateway\n'
LLM_TAIL_LINES = ("# Where the gateway forwards your bot's LLM calls (set HARNESS_LLM_API_KEY in the environment).\n"
                  '# llm_upstream = "https://api.openai.com/v1"\n')


def files_for(channel: str, llm: bool = True) -> dict[str, str]:
    target = TELEGRAM_TARGET if channel == "telegram" else WHATSAPP_TARGET
    files = {
        "harness.toml": CONFIG_HEAD + target + CONFIG_TAIL,
        "fixtures/robustness/examples.yaml": ROBUSTNESS.format(channel=channel),
        "fixtures/multiturn/examples.yaml": MULTITURN.format(channel=channel),
        "fixtures/reasoning/examples.yaml": REASONING.format(channel=channel),
        "fixtures/cost/examples.yaml": COST.format(channel=channel, **COST_WITH_LLM),
        "fixtures/documents/sample.txt": SAMPLE_DOCUMENT,
        ".gitignore": GITIGNORE,
    }
    if not llm:  # a bot without a model: nothing that assumes one
        files["harness.toml"] = (CONFIG_HEAD + target.replace(LLM_ENV_LINE, "") + CONFIG_TAIL.replace(LLM_TAIL_LINES, "")
                                 + NO_LLM_ROBUSTNESS)
        files["fixtures/cost/examples.yaml"] = COST.format(channel=channel, **COST_NO_LLM)
        del files["fixtures/reasoning/examples.yaml"], files["fixtures/documents/sample.txt"]
    return files


def init_project(directory: str | Path, channel: str, llm: bool = True) -> list[Path]:
    """Write the scaffold into ``directory``; refuse (write nothing) if any file exists.
    ``llm=False`` (``--no-llm``): leave out what assumes a language model and documents."""
    if channel not in ("telegram", "whatsapp"):
        raise UsageError(f"unknown channel {channel!r}", fix="--channel telegram or --channel whatsapp")
    root = Path(directory)
    from harness.schema.files import output_dir_problem

    problem = output_dir_problem(root)
    if problem:
        raise UsageError(problem.replace("--out", "the project folder"), fix="harness init DIR names a folder "
                         "you can write (created if missing)")
    files = files_for(channel, llm)
    existing = [rel for rel in files if (root / rel).exists()]
    if existing:
        raise UsageError(f"refusing to overwrite existing files in {root}: {', '.join(existing)}",
                         fix="run harness init in an empty folder, or move those files away")
    written = []
    for rel, text in files.items():
        path = root / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"cannot write {path}: {exc.strerror or exc}" + (
                f" (written before it: {', '.join(map(str, written))})" if written else ""),
                fix="harness init DIR names a folder you can write") from None
        written.append(path)
    return written
