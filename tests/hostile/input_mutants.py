"""Seeded generators of hostile inputs: mutated case files and bad harness.toml configs (issue 13).

Every mutant is invalid by construction (a type swap, a bad number, an unknown or duplicate
key, bad bytes, deep nesting, an alias bomb, a huge generator, a path that is no file...);
``harness check`` must refuse each with exit 2 and one clear message, never a traceback, a
hang or an acceptance. ``case_mutants()`` and ``config_mutants()`` return the same list for the
same seed.
"""

from __future__ import annotations

import math
import random
import textwrap
from dataclasses import dataclass, field

SEED = 13

BASE_CASES = textwrap.dedent("""\
    layer: robustness
    defaults: {channel: telegram}
    cases:
      - id: base-one
        tags: [url]
        description: "the unmutated case"
        timeout_s: 30
        send: "summarize {docs}/paper.pdf for twitter"
        expect:
          reply: {regex: "(?i)summary", not_contains: ["Traceback"], max_chars: 4000}
          replies: {min: 1, max: 2}
          tools_not_called: [fetch_document]
      - id: base-two
        channel: whatsapp
        turns:
          - send: "hello"
            wait_s: 0.5
          - photo: {caption: "a photo"}
            expect: {replies: {min: 1}}
          - document: {file_name: "a.pdf", mime_type: "application/pdf"}
            expect: {reply: {contains: ["pdf"]}, latency_ms: {total_max: 5000}}
    """)


@dataclass
class Mutant:
    """One hostile input: ``kind`` says how to write it (text, bytes, dir, loop, dangling)."""

    name: str
    kind: str = "text"
    text: str = ""
    data: bytes = b""
    env: dict = field(default_factory=dict)
    args: list = field(default_factory=list)
    """Extra command-line arguments (configs: --out ...)."""
    setup: str = ""
    """A named preparation of the project folder (configs: lock-dir)."""


# --------------------------------------------------------------------------- case files


def _yaml(value) -> str:
    if isinstance(value, float) and math.isnan(value):
        return ".nan"
    if isinstance(value, float) and math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return '"' + value.replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_yaml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_yaml(v)}" for k, v in value.items()) + "}"
    return str(value)


#: Lines of BASE_CASES to replace (the exact text after the indentation) and invalid values for them.
_SWAPS: dict[str, tuple[str, list]] = {
    "tags: [url]": ("tags", [5, {"a": 1}, [1, 2], [["x"]], True, 1.5]),
    'description: "the unmutated case"': ("description", [5, ["a"], {"a": 1}]),
    "timeout_s: 30": ("timeout_s", [float("nan"), float("inf"), float("-inf"), -1, 0, "soon", [30], True, 1e9]),
    'send: "summarize {docs}/paper.pdf for twitter"': ("send", [5, ["a", "b"], {"text": "x"}, True,
                                                             "{words:1000000000}", "{words:100001}",
                                                             "{words:0}", "{words:-5}", "{words:abc}",
                                                             "{nope}", "unclosed {docs", "{docs:1}"]),
    "replies: {min: 1, max: 2}": ("replies", [5, "many", [1, 2], {"min": float("nan")}, {"min": 3, "max": 1},
                                              {"min": -1}, {"least": 1}, {"max": float("inf")}]),
    "tools_not_called: [fetch_document]": ("tools_not_called", [5, {"a": 1}, [5], True]),
    "channel: whatsapp": ("channel", ["signal", 5, ["telegram"], {"a": 1}, True]),
    "wait_s: 0.5": ("wait_s", [float("nan"), float("inf"), -0.5, "soon", [1], 1e9, True]),
    'photo: {caption: "a photo"}': ("photo", [{"caption": [1, 2]}, {"caption": 5}, {"caption": {"a": 1}},
                                              {"capture": "x"}, 5, "photo", [1]]),
    'document: {file_name: "a.pdf", mime_type: "application/pdf"}': (
        "document", [{"file_name": "a.pdf"}, {"file_name": 5, "mime_type": "application/pdf"},
                     {"file_name": "a.pdf", "mime_type": "pdf"}, {"file_name": "a.pdf", "mime_type": 7},
                     {"file_name": "a.pdf", "mime_type": "application/pdf", "size": 1}, "a.pdf", []]),
    "expect: {replies: {min: 1}}": ("expect", [5, "replies", [1], {"replies": 5}, {"reply": {"json": {"required": 5}}},
                                               {"reply": {"regex": 5}}, {"reply": {"regex": "(unclosed"}},
                                               {"reply": {"max_chars": float("nan")}}, {"reply": 5},
                                               {"reply": {}}, {"latency_ms": {"total_max": float("nan")}}]),
}

#: Lines of BASE_CASES (stripped) after which an unknown sibling key goes; None: inside the flow mapping.
_UNKNOWN_KEY_SPOTS = ["layer: robustness", "- id: base-one", '- send: "hello"', "replies: {min: 1, max: 2}", None]


def _sibling(base: str, line_text: str, new: str) -> str:
    """``base`` with the key line ``new`` added after the line whose stripped text is ``line_text``,
    as a sibling key of the same mapping."""
    lines = base.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == line_text:
            indent = len(line) - len(line.lstrip()) + (2 if line.lstrip().startswith("- ") else 0)
            lines.insert(i + 1, " " * indent + new)
            return "\n".join(lines) + "\n"
    raise AssertionError(f"no line {line_text!r} in the base file")


def _replace_value(base: str, line_text: str, key: str, value) -> str:
    for line in base.splitlines():
        if line.strip().removeprefix("- ") == line_text:
            indent = line[: len(line) - len(line.lstrip())]
            prefix = "- " if line.lstrip().startswith("- ") else ""
            new = f"{indent}{prefix}{key}: {_yaml(value)}"
            return base.replace(line + "\n", new + "\n", 1)
    raise AssertionError(f"no line {line_text!r} in the base file")


def _bomb(depth: int, width: int = 9) -> str:
    lines = ["layer: robustness", f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, depth + 1):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    lines.append("cases:\n  - id: bomb\n    send: hi\n    expect: {replies: {min: 1}}")
    return "\n".join(lines) + "\n"


def case_mutants(seed: int = SEED) -> list[Mutant]:
    """At least 150 invalid case files, the same for the same seed."""
    rng = random.Random(seed)
    out: list[Mutant] = []
    # 1. type swaps and bad numbers at every interesting key
    for line_text, (key, values) in _SWAPS.items():
        for value in values:
            out.append(Mutant(f"swap-{key}-{len(out)}-{_yaml(value)[:24]}",
                              text=_replace_value(BASE_CASES, line_text, key, value)))
    # 2. unknown keys at each level (random names from the seed)
    for line_text in _UNKNOWN_KEY_SPOTS:
        for _ in range(3):
            name = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz_") for _ in range(rng.randint(3, 10))) + "x"
            if line_text is None:  # inside a flow mapping of checks
                text = BASE_CASES.replace("reply: {regex:", f"reply: {{{name}: 1, regex:", 1)
            else:
                text = _sibling(BASE_CASES, line_text, f"{name}: 1")
            out.append(Mutant(f"unknown-key-{name}", text=text))
    for typo in ("expects", "turn", "sends", "chanel", "tag", "timeout", "user", "sorce", "variant", "judge"):
        out.append(Mutant(f"typo-{typo}", text=_sibling(BASE_CASES, "tags: [url]", f"{typo}: 1")))
    # 3. duplicate keys at each level (the second silently won before)
    for line_text, dup in (("layer: robustness", "layer: cost"), ("tags: [url]", "tags: [other]"),
                           ("timeout_s: 30", "timeout_s: 40"), ("replies: {min: 1, max: 2}", "replies: {min: 2}"),
                           ("defaults: {channel: telegram}", "defaults: {channel: whatsapp}"),
                           ("wait_s: 0.5", "wait_s: 1"), ("channel: whatsapp", "channel: telegram")):
        out.append(Mutant(f"duplicate-{line_text[:20]}", text=_sibling(BASE_CASES, line_text, dup)))
    out.append(Mutant("duplicate-in-flow", text=BASE_CASES.replace("replies: {min: 1, max: 2}",
                                                                   "replies: {min: 1, max: 2, min: 3}")))
    out.append(Mutant("duplicate-cases", text=BASE_CASES.replace("cases:\n", "cases: []\ncases:\n", 1)))
    out.append(Mutant("duplicate-expect", text=_sibling(BASE_CASES, "timeout_s: 30", "expect: {replies: {min: 1}}")))
    # 4. bad encodings
    base_bytes = BASE_CASES.encode("utf-8")
    for i in range(12):
        pos = rng.randrange(len(base_bytes))
        bad = rng.choice([b"\xff", b"\xfe", b"\xc3", b"\x80", b"\xe2\x82", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"])
        out.append(Mutant(f"bytes-{i}-{bad.hex()}", kind="bytes", data=base_bytes[:pos] + bad + base_bytes[pos:]))
    out.append(Mutant("latin-1", kind="bytes", data=BASE_CASES.replace("the unmutated", "the naïve").encode("latin-1")))
    out.append(Mutant("utf-16", kind="bytes", data=BASE_CASES.encode("utf-16")))
    out.append(Mutant("nul-byte", kind="bytes", data=base_bytes.replace(b"hello", b"hel\x00lo")))
    out.append(Mutant("control-char", kind="bytes", data=base_bytes.replace(b"hello", b"hel\x07lo")))
    # 5. deep nesting
    for depth in (65, 200, 20_000):
        out.append(Mutant(f"brackets-{depth}", text="layer: robustness\ncases: " + "[" * depth + "]" * depth + "\n"))
        out.append(Mutant(f"braces-{depth}", text="layer: robustness\nx: " + "{a: " * depth + "1" + "}" * depth + "\n"))
    out.append(Mutant("block-nesting-100", text="layer: robustness\ncases:\n" + "".join(
        "  " * i + "- \n" for i in range(1, 100)) + "  " * 100 + "- x\n"))
    # 6. alias bombs and alias cycles
    for depth in (6, 7, 8, 9, 10):
        out.append(Mutant(f"alias-bomb-{depth}", text=_bomb(depth)))
    out.append(Mutant("alias-bomb-wide", text=_bomb(3, width=100)))
    out.append(Mutant("alias-cycle", text="layer: robustness\ncases: &c [*c]\n"))
    out.append(Mutant("alias-undefined", text="layer: robustness\ncases: *nowhere\n"))
    out.append(Mutant("merge-bomb", text=_bomb(8).replace("cases:", "m: {<<: *a8}\ncases:")))
    # 7. structure
    for name, text in (("empty", ""), ("comment-only", "# nothing\n"), ("list-document", "- a\n- b\n"),
                       ("scalar-document", "hello\n"), ("no-layer", "cases: []\n"), ("layer-number", "layer: 5\ncases: [x]\n"),
                       ("cases-mapping", "layer: robustness\ncases: {a: 1}\n"),
                       ("cases-empty", "layer: robustness\ncases: []\n"), ("cases-missing", "layer: robustness\n"),
                       ("defaults-list", BASE_CASES.replace("defaults: {channel: telegram}", "defaults: [1]")),
                       ("defaults-bad-channel", BASE_CASES.replace("defaults: {channel: telegram}", "defaults: {channel: fax}")),
                       ("case-scalar", "layer: robustness\ncases: [5]\n"), ("case-list", "layer: robustness\ncases: [[1]]\n"),
                       ("two-documents", BASE_CASES + "---\n" + BASE_CASES),
                       ("syntax-unclosed", "layer: robustness\ncases: [\n"), ("syntax-tab", "layer: robustness\n\tcases: []\n"),
                       ("syntax-colon", "layer: robustness\ncases:\n  - id: a: b\n"),
                       ("unhashable-key", "layer: robustness\n? [1, 2]\n: x\ncases: []\n"),
                       ("python-tag", "layer: !!python/object:os.system echo\ncases: []\n"),
                       ("bad-id", BASE_CASES.replace("id: base-one", "id: Base_One")),
                       ("id-number", BASE_CASES.replace("id: base-one", "id: 5")),
                       ("dup-id", BASE_CASES.replace("id: base-two", "id: base-one")),
                       ("turns-and-send", _sibling(BASE_CASES, "channel: whatsapp", "send: x")),
                       ("turns-empty", BASE_CASES.split("    turns:")[0] + "    turns: []\n"),
                       ("no-checks", "layer: robustness\ncases:\n  - id: a\n    send: hi\n"),
                       ("users-one", _sibling(BASE_CASES, "channel: whatsapp", "users: [alice]")),
                       ("redeliver-first", "layer: robustness\ncases:\n  - id: a\n    redeliver: true\n"
                                           "    expect: {replies: {min: 1}}\n"),
                       ("source-missing", "layer: robustness\ncases:\n  - id: a\n    source: no-such.pdf\n    send: hi\n"
                                          "    expect: {replies: {min: 1}}\n"),
                       ("source-escape", "layer: robustness\ncases:\n  - id: a\n    source: ../../etc/passwd\n"
                                         "    send: hi\n    expect: {replies: {min: 1}}\n"),
                       ("huge-file", "layer: robustness\n# " + "x" * 2_100_000 + "\ncases: []\n")):
        out.append(Mutant(f"structure-{name}", text=text))
    # 8. paths that are no file
    out.append(Mutant("folder-named-yaml", kind="dir"))
    out.append(Mutant("symlink-loop", kind="loop"))
    out.append(Mutant("dangling-symlink", kind="dangling"))
    names = [m.name for m in out]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    return out


# --------------------------------------------------------------------------- configs

BASE_CONFIG = textwrap.dedent("""\
    [target]
    name = "bot"
    inprocess = "tests.agents.echo:make_app"
    port = 0
    ready_timeout_s = 30

    [sandbox]
    settle_s = 0.5
    reply_timeout_s = 15
    case_timeout_s = 90
    concurrency = 4
    llm_mode = "live"

    [critic]
    backend = "offline"

    [embeddings]
    backend = "hash"
    threshold = 0.75

    [budget]
    run_usd = 1.0
    anomaly_window = 7

    [alerts]
    smtp_port = 587

    [storage]
    url = "s3://nightly-evals/chatbot"
    addressing_style = "path"

    [schedule]
    cron = "0 2 * * *"
    tz = "Europe/Madrid"
    repeat = 1
    """)

#: (section, key, invalid TOML values)
_CONFIG_SWAPS = [
    ("target", "port", ['"abc"', "-1", "70000", "1.5", "true", "[80]"]),
    ("target", "ready_timeout_s", ['"soon"', "nan", "inf", "-inf", "-1", "0", "[1]"]),
    ("target", "name", ["5", "[1]", "{a = 1}"]),
    ("target", "inprocess", ['"no colon"', "5"]),
    # issue 24: what execve cannot take, and programs that cannot start
    ("target", "command", ['["python", "my\\u0000bot.py"]', '["/nonexistent/bot"]', '["/"]',
                           '["no-such-program-on-path-xyz"]']),
    ("target.env", '"A=B"', ['"x"']),
    ("target.env", "X", ['"a\\u0000b"']),
    ("storage", "url", ['"s3://abc/../other"', '"s3://abc/a/./b"', '"s3://abc/x?versionId=1"',
                        '"s3://abc/a\\u0000b"', '"s3://abc/a//b"']),
    ("schedule", "out", ['"harness.toml"', '"/proc/nightly"']),
    ("sandbox", "settle_s", ["nan", "inf", "-1", '"fast"']),
    ("sandbox", "reply_timeout_s", ["0", "-5", "inf", "nan"]),
    ("sandbox", "case_timeout_s", ["nan", "0", '"90"']),
    ("sandbox", "concurrency", ["0", "-1", "1.5", '"8"', "100000", "true"]),
    ("sandbox", "llm_mode", ['"bogus"', "5", '"REPLAY"']),
    ("critic", "backend", ['"bogus"', "5"]),
    ("embeddings", "backend", ['"bogus"']),
    ("embeddings", "threshold", ["2", "-0.1", "nan", '"high"']),
    ("budget", "run_usd", ["-1", "0", "nan", "inf", '"x"']),
    ("budget", "anomaly_window", ["0", "1.5", '"week"']),
    ("alerts", "smtp_port", ["70000", "-1", '"smtp"']),
    ("storage", "url", ['"https://bucket/prefix"', '"s3://Bad_Bucket/x"', '"s3://ab/x"', f'"s3://{"a" * 64}/x"',
                        '"s3://192.168.1.1/x"', '"s3://xn--bucket/x"', '"s3://my..bucket/x"', '"s3://bucket-s3alias/x"',
                        '"s3://-bucket/x"', '"s3://bucket_name/x"', "5"]),
    ("storage", "addressing_style", ['"sideways"', "5"]),
    ("schedule", "cron", ['"0 2 31 2 *"', '"0 2 31 4,6 *"', '"0 2 * *"', '"60 2 * * *"', '"0 25 * * *"', '"0 2 32 * *"', '"0 2 * 13 *"',
                          '"0 2 * * 8"', '"a b c d e"', '"*/0 * * * *"', '"5-1 * * * *"', "5"]),
    ("schedule", "tz", ['"Mars/Base"', '"Europe/Nowhere"', '"../../etc/passwd"', "5", '""']),
    ("schedule", "repeat", ["0", "-1", '"x"', "1.5"]),
]


def _set(text: str, section: str, key: str, value: str) -> str:
    lines = text.splitlines()
    if f"[{section}]" not in lines:
        lines.append(f"[{section}]")
    start = lines.index(f"[{section}]")
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("["):
            break
        if lines[i].split("=")[0].strip() == key:
            lines[i] = f"{key} = {value}"
            return "\n".join(lines) + "\n"
    lines.insert(start + 1, f"{key} = {value}")
    return "\n".join(lines) + "\n"


def config_mutants(seed: int = SEED) -> list[Mutant]:
    """At least 100 invalid configs (and command lines), the same for the same seed."""
    rng = random.Random(seed)
    out: list[Mutant] = []
    for section, key, values in _CONFIG_SWAPS:
        for value in values:
            out.append(Mutant(f"{section}.{key}={value[:20]}", text=_set(BASE_CONFIG, section, key, value)))
    # keys that are valid but ask for something that is not there
    out.append(Mutant("replay-missing-cassette", text=_set(_set(BASE_CONFIG, "sandbox", "llm_mode", '"replay"'),
                                                             "sandbox", "cassette", '"cassettes/none.jsonl"')))
    out.append(Mutant("record-without-cassette", text=_set(BASE_CONFIG, "sandbox", "llm_mode", '"record"')))
    out.append(Mutant("prices-missing", text=_set(BASE_CONFIG, "budget", "prices", '"no-such-prices.toml"')))
    out.append(Mutant("prices-a-folder", text=_set(BASE_CONFIG, "budget", "prices", '"."')))
    # unknown keys and sections, secrets in the file
    for section in ("target", "sandbox", "critic", "embeddings", "budget", "alerts", "storage", "schedule", "suite"):
        name = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(4, 9)))
        text = BASE_CONFIG if f"[{section}]" in BASE_CONFIG else BASE_CONFIG + f"[{section}]\n"
        out.append(Mutant(f"unknown-{section}-{name}", text=_set(text, section, name, "1")))
    out.append(Mutant("unknown-section", text=BASE_CONFIG + "[targets]\nname = \"x\"\n"))
    out.append(Mutant("section-not-table", text="target = 5\n"))
    out.append(Mutant("secret-in-file", text=_set(BASE_CONFIG, "critic", "api_key", '"sk-123"')))
    out.append(Mutant("token-in-file", text=_set(BASE_CONFIG, "alerts", "telegram_token", '"123:abc"')))
    out.append(Mutant("env-table-nested", text=BASE_CONFIG.replace("[sandbox]", "[target.env]\nA = {b = 1}\n\n[sandbox]")))
    out.append(Mutant("command-numbers", text=_set(BASE_CONFIG, "target", "command", "[1, 2]")))
    out.append(Mutant("suite-fixtures-number", text=BASE_CONFIG + "[suite]\nfixtures = 5\n"))
    out.append(Mutant("schedule-layers-number", text=_set(BASE_CONFIG, "schedule", "layers", "5")))
    # TOML syntax, duplicates, bytes, nesting
    out.append(Mutant("toml-duplicate-key", text=BASE_CONFIG.replace('name = "bot"', 'name = "bot"\nname = "bot2"')))
    out.append(Mutant("toml-duplicate-section", text=BASE_CONFIG + "[target]\nname = \"again\"\n"))
    out.append(Mutant("toml-unclosed-string", text=BASE_CONFIG.replace('name = "bot"', 'name = "bot')))
    out.append(Mutant("toml-no-value", text=BASE_CONFIG.replace("port = 0", "port =")))
    out.append(Mutant("toml-deep-arrays", text="[target]\nname = " + "[" * 20_000 + "]" * 20_000 + "\n"))
    out.append(Mutant("toml-deep-tables", text="[target]\nname = " + "{a = " * 3_000 + "1" + "}" * 3_000 + "\n"))
    raw = BASE_CONFIG.encode("utf-8")
    for i in range(4):
        pos = rng.randrange(len(raw))
        out.append(Mutant(f"config-bytes-{i}", kind="bytes", data=raw[:pos] + b"\xff\xfe" + raw[pos:]))
    out.append(Mutant("config-latin-1", kind="bytes", data=BASE_CONFIG.replace('"bot"', '"bøt"').encode("latin-1")))
    out.append(Mutant("config-utf-16", kind="bytes", data=BASE_CONFIG.encode("utf-16")))
    out.append(Mutant("config-huge", text="# " + "x" * 2_100_000 + "\n"))
    # paths that are no file
    out.append(Mutant("config-folder", kind="dir"))
    out.append(Mutant("config-symlink-loop", kind="loop"))
    out.append(Mutant("config-dangling", kind="dangling"))
    # environment overrides
    for name, value in (("HARNESS_TARGET_PORT", "abc"), ("HARNESS_TARGET_PORT", "70000"),
                        ("HARNESS_SANDBOX_SETTLE_S", "nan"), ("HARNESS_SANDBOX_LLM_MODE", "bogus"),
                        ("HARNESS_SANDBOX_CONCURRENCY", "0"), ("HARNESS_TARGET_NOPE", "1"),
                        ("HARNESS_SCHEDULE_CRON", "bad cron"), ("HARNESS_STORAGE_URL", "s3://A/b")):
        out.append(Mutant(f"env-{name}={value}", text=BASE_CONFIG, env={name: value}))
    # the command line and the reports folder
    out.append(Mutant("out-is-a-file", text=BASE_CONFIG, args=["--out", "@file"]))
    for flag, value in (("--budget-usd", "nan"), ("--budget-usd", "inf"), ("--budget-usd", "-1"), ("--repeat", "0"),
                        ("--concurrency", "0"), ("--concurrency", "many"), ("--shard", "3/2"), ("--shard", "x"),
                        ("--layer", "nope"), ("--run-id", "../escape")):
        out.append(Mutant(f"cli{flag}={value}", text=BASE_CONFIG, args=[flag, value]))
    out.append(Mutant("lock-is-a-folder", text=BASE_CONFIG, setup="lock-dir"))
    names = [m.name for m in out]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    return out
