"""Planted secrets never leave: 0 secret bytes in results.json, results.jsonl, junit.xml,
summary.md, report.html, target.log, manifest.json, the console, the crash log and every
object uploaded to storage (a moto S3 server on loopback).

The hostile paths of issue 13: a critic endpoint that echoes the key in its 401 error text, an
alert endpoint whose error echoes the Telegram alert token, and a bot that prints its pinned
token (and every secret of its environment) into target.log, which is uploaded, and into
its replies. Thirteen planted secrets, each named differently (pinned HARNESS_* secrets,
provider keys, storage keys, variables named only by an ``*_env`` key).
"""

from __future__ import annotations

import json
import secrets
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from harness import redact
from tests.hostile._project import HELLO, bot_config, harness_cli, write_cases
from tests.ops.ops_support import ACCESS_KEY, SECRET_KEY, MotoS3


def _token(digits: int = 9) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-"
    return str(secrets.randbelow(9 * 10 ** (digits - 1)) + 10 ** (digits - 1)) + ":" + "".join(
        secrets.choice(alphabet) for _ in range(35))


class EchoingEndpoints:
    """A critic (OpenAI-compatible) and a Bot API that refuse every call and echo the credential
    they were given in the error text, as careless real services do."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path.endswith("/chat/completions"):
                    body = {"error": {"message": f"Incorrect API key provided: {self.headers.get('Authorization')}",
                                      "type": "invalid_request_error"}}
                else:  # /bot<token>/sendMessage
                    body = {"ok": False, "error_code": 401, "description": f"Unauthorized: {self.path} was rejected"}
                data = json.dumps(body).encode()
                self.send_response(401)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def endpoints():
    e = EchoingEndpoints()
    yield e
    e.stop()


@pytest.fixture
def s3():
    server = MotoS3()
    yield server
    server.stop()


CASES = """
layer: robustness
cases:
  - id: judged-by-a-leaky-critic
    send: "hello"
    expect:
      reply: {contains: "echo: hello"}
      critic: {answer: {expected: "echo: hello", min: 0.8}}
  - id: regresses-so-an-alert-goes-out
    send: "again"
    expect:
      reply: {contains: "this text never comes"}
"""


def project(tmp_path: Path, endpoints: EchoingEndpoints, s3: MotoS3) -> Path:
    write_cases(tmp_path, "hostile.yaml", CASES)
    (tmp_path / "golden").mkdir()
    return bot_config(tmp_path, "leak,reply", name="leaky", tables=f"""
        [sandbox]
        settle_s = 0.2
        reply_timeout_s = 5
        [critic]
        backend = "openai"
        model = "gpt-4o-mini"
        base_url = "{endpoints.url}/v1"
        api_key_env = "HOSTILE_CRITIC_KEY"
        max_retries = 0
        [alerts]
        on = ["regression"]
        telegram_chat_id = "-1001234567890"
        telegram_token_env = "HOSTILE_ALERT_TOKEN"
        telegram_api_base = "{endpoints.url}"
        retries = 1
        backoff_s = 0
        timeout_s = 3
        smtp_password_env = "MY_SMTP_SECRET_PLACE"
        [storage]
        url = "s3://{s3.bucket}/nightly"
        endpoint_url = "{s3.endpoint}"
        region = "us-east-1"
        addressing_style = "path"
        retry_backoff_s = 0.01
        timeout_s = 5
        """)


def test_no_planted_secret_leaves_the_run(tmp_path, endpoints, s3):
    planted = {
        "HOSTILE_CRITIC_KEY": "sk-hostile" + secrets.token_urlsafe(24).replace("-", "x"),
        "HOSTILE_ALERT_TOKEN": _token(),
        "HARNESS_BOT_TOKEN": _token(10),
        "HARNESS_WEBHOOK_SECRET": secrets.token_hex(16),
        "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
        "AWS_SESSION_TOKEN": "FwoGZXIvYXdzE" + secrets.token_urlsafe(30),
        "HARNESS_APP_SECRET": secrets.token_hex(16),
        "HARNESS_VERIFY_TOKEN": secrets.token_hex(12),
        "HARNESS_WHATSAPP_TOKEN": "EAAG" + secrets.token_urlsafe(40),
        "HARNESS_LLM_API_KEY": "gsk_" + secrets.token_urlsafe(30),
        "OPENAI_API_KEY": "sk-proj-" + secrets.token_urlsafe(30),
        "ANTHROPIC_API_KEY": "sk-ant-api03-" + secrets.token_urlsafe(30),
        "MY_SMTP_SECRET_PLACE": "smtp-" + secrets.token_urlsafe(16),  # named only by smtp_password_env
    }
    cfg = project(tmp_path, endpoints, s3)
    out = tmp_path / "reports"
    done = harness_cli("run", "--config", cfg, "--out", out, "--upload", cwd=tmp_path, timeout=240,
                       env={**planted, "AWS_ACCESS_KEY_ID": ACCESS_KEY})
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    run_dir = next(p for p in out.iterdir() if p.is_dir() and not p.name.startswith("."))

    # The secrets were really there to leak: each hostile path left its redaction mark.
    results = json.loads((run_dir / "results.json").read_text())
    critic = next(e for c in results["cases"] for e in c["evidence"] if e["check"] == "critic.answer")
    assert "[redacted:" in critic["reason"], critic
    assert "Incorrect API key provided: Bearer [redacted:" in critic["reason"]
    assert any("alert regression via telegram: FAILED" in n and "[redacted:" in n for n in results["notes"]), \
        results["notes"]
    log = (run_dir / "target.log").read_text()
    assert "starting with token [redacted:HARNESS_BOT_TOKEN]" in log, log[:2000]
    for name in planted:  # the bot printed every one of them
        assert f"env {name}=[redacted:" in log or name in ("HARNESS_BOT_TOKEN",), (name, log[:3000])
    reply = results["cases"][0]["turns"][0]["replies"][0]["text"]
    assert reply == "echo: hello (my token is [redacted:HARNESS_BOT_TOKEN])"

    # ... and not one byte of any of them is anywhere.
    sinks: dict[str, bytes] = {"console stdout": done.stdout.encode(), "console stderr": done.stderr.encode()}
    for path in out.rglob("*"):
        if path.is_file():
            sinks[str(path.relative_to(out))] = path.read_bytes()
    client = s3.client()
    listed = client.list_object_versions(Bucket=s3.bucket).get("Versions") or []
    assert any(v["Key"].endswith("target.log") for v in listed) and any(v["Key"].endswith("results.json")
                                                                       for v in listed)
    for v in listed:
        body = client.get_object(Bucket=s3.bucket, Key=v["Key"], VersionId=v["VersionId"])["Body"].read()
        sinks[f"s3://{v['Key']}@{v['VersionId']}"] = body
    for name in ("results.json", "results.jsonl", "junit.xml", "summary.md", "report.html", "target.log",
                 "manifest.json"):
        assert any(k.endswith(name) for k in sinks), f"{name} was never written"
    for where, data in sinks.items():
        for secret_name, value in planted.items():
            assert value.encode() not in data, f"{secret_name} leaked into {where}"


def test_the_redactor_knows_every_secret_of_a_config(tmp_path, monkeypatch):
    from harness.config import load_config

    cfg = tmp_path / "harness.toml"
    cfg.write_text(textwrap.dedent("""
        [critic]
        api_key_env = "MY_CRITIC_KEY"
        [alerts]
        webhook_url_env = "MY_ALERT_URL"
        smtp_password_env = "MY_SMTP_PASSWORD"
        """))
    env = {"MY_CRITIC_KEY": "critic-key-1234567", "MY_ALERT_URL": "https://hooks.example/T0/B0/abcdefgh",
           "MY_SMTP_PASSWORD": "pw-pw-pw-pw-pw", "HARNESS_LLM_API_KEY": "llm-key-abcdefgh",
           "HARNESS_APP_SECRET": "app-secret-pinned-1"}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    config = load_config(cfg)
    r = redact.for_config(config)
    text = " ".join([*env.values(), config.secrets.bot_token, config.secrets.webhook_secret,
                     config.secrets.verify_token, config.secrets.whatsapp_token])
    cleaned = r.text(text)
    for value in [*env.values(), config.secrets.bot_token, config.secrets.webhook_secret,
                  config.secrets.verify_token, config.secrets.whatsapp_token]:
        assert value not in cleaned
    assert "[redacted:MY_CRITIC_KEY]" in cleaned and "[redacted:MY_ALERT_URL]" in cleaned
    # A redactor that was not told about the config misses its *_env secrets (this test can fail).
    assert "critic-key-1234567" in redact.Redactor({}).text(text)


@pytest.mark.parametrize("text, leaked", [
    ("Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl"),
    ("key sk-proj-abcdefghijklmnop1234 in a 401", "sk-proj-abcdefghijklmnop1234"),
    ("https://api.telegram.org/bot123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawx/getMe",
     "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawx"),
    ("aws AKIAIOSFODNN7EXAMPLE here", "AKIAIOSFODNN7EXAMPLE"),
    ("GET /v1/x?api_key=supersecretvalue1&y=2", "supersecretvalue1"),
])
def test_key_shapes_are_redacted_without_being_told(text, leaked):
    cleaned = redact.Redactor({}).text(text)
    assert leaked not in cleaned and "[redacted:" in cleaned
    assert redact.Redactor({}, shapes=()).text(text) == text  # without the shapes it would leak


def test_ordinary_text_is_left_alone():
    r = redact.Redactor({"short": "abc", "token": "a-long-secret-value"})
    text = "12:30 the sk-8 model, a Bearer of news, abc and 1234567:short"
    assert r.text(text) == text


def test_binary_and_split_secret(tmp_path):
    r = redact.Redactor({"token": "a-long-secret-value"})
    assert b"a-long-secret-value" not in r.binary(b"\xff\xfe a-long-secret-value \x00")
    assert "a-long-secret-value" not in json.dumps(r.data({"a-long-secret-value": ["x a-long-secret-value"]}))


def test_a_crash_prints_one_line_and_writes_a_redacted_crash_log(tmp_path, monkeypatch, capsys):
    import harness.cli as cli
    import harness.cli.tools as cli_tools

    secret = "sk-" + "c" * 30
    monkeypatch.setenv("HARNESS_CRITIC_KEY_PINNED_TOKEN", "pinned-token-value-1")

    def boom(args):
        raise RuntimeError(f"unexpected: {secret} and pinned-token-value-1")

    monkeypatch.setattr(cli_tools, "cmd_init", boom)
    redact.install(redact.from_environ())
    code = cli.main(["init", str(tmp_path / "p")])
    err = capsys.readouterr().err
    assert code == cli.CRASH_EXIT
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert secret not in err and "pinned-token-value-1" not in err
    path = Path(err.strip().rsplit(": ", 1)[1])
    log = path.read_text()
    try:
        assert "Traceback" in log and "RuntimeError" in log
        assert secret not in log and "pinned-token-value-1" not in log and "[redacted:sk-key]" in log
    finally:
        path.unlink()


def test_upload_refuses_a_folder_outside_the_reports_folder(tmp_path, s3, monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    import harness.cli as cli
    import harness.cli.tools as cli_tools

    reports = tmp_path / "reports"
    reports.mkdir()
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "results.json").write_text("{}")
    (outside / "id_rsa").write_text("PRIVATE")
    (reports / "linked").symlink_to(outside)
    cfg = tmp_path / "harness.toml"
    cfg.write_text(f'[storage]\nurl = "s3://{s3.bucket}/n"\nendpoint_url = "{s3.endpoint}"\nregion = "us-east-1"\n'
                   'addressing_style = "path"\n')
    for name in ("../private", str(outside), "linked", "."):
        code = cli.main(["upload", name, "--config", str(cfg), "--out", str(reports)])
        assert code == 2, name
    assert s3.keys() == []


@pytest.mark.parametrize("text, leaked", [
    ("GET /cb?client_secret=s3cr3t-value-99&state=1", "s3cr3t-value-99"),
    ("https://hooks.example/x?password=hunter2hunter2", "hunter2hunter2"),
    ("https://blob.example/a.pdf?sv=2024&sig=AbCdEf0123456789%3D", "AbCdEf0123456789"),
    ("https://x.example/y?X-Amz-Signature=0123456789abcdef0123", "0123456789abcdef0123"),
    ("postgres://admin:pa55w0rd-long@db.internal:5432/app", "pa55w0rd-long"),
    ("http://user:pw1234567@host/path", "pw1234567"),
    ("Authorization: Basic dXNlcjpodW50ZXIyaHVudGVyMg==", "dXNlcjpodW50ZXIyaHVudGVyMg"),
])
def test_secret_shapes_round_3(text, leaked):
    """Issue 24: query values by secret-looking names, a URL's password, Basic credentials."""
    cleaned = redact.Redactor({}).text(text)
    assert leaked not in cleaned and "[redacted:" in cleaned, cleaned
    assert redact.Redactor({}, shapes=()).text(text) == text


@pytest.mark.parametrize("secret", ['quote"and\\backslash-secret', "ünïcödé-sécret-válue", "plain-secret-value-1"])
def test_every_form_of_a_known_secret_is_redacted(secret):
    import base64
    import html
    from urllib.parse import quote

    r = redact.Redactor({"MY_KEY": secret})
    forms = {"json": json.dumps({"k": secret})[7:-2], "json-ascii": json.dumps(secret)[1:-1],
             "json-utf8": json.dumps(secret, ensure_ascii=False)[1:-1], "url": quote(secret, safe=""),
             "html": html.escape(secret), "base64": base64.b64encode(secret.encode()).decode()}
    for name, form in forms.items():
        cleaned = r.text(f"before {form} after")
        assert form not in cleaned and "[redacted:MY_KEY]" in cleaned, (name, cleaned)
    blob = json.dumps({"reply": f"the key is {secret}"})  # what results.json writes
    assert secret not in r.text(blob) and json.dumps(secret)[1:-1] not in r.text(blob)


def test_ordinary_urls_keep_their_query():
    text = "see https://example.com/a?page=2&lang=en and http://host:8080/x"
    assert redact.Redactor({}).text(text) == text


# --------------------------------------------------------------------------- round 3 forms (issue 24)

_SECRET3 = 'p@ss"w\\rd/ +é&<x>1234'


@pytest.mark.parametrize("form", [
    pytest.param(lambda v: __import__("json").dumps(__import__("json").dumps(v)), id="json-in-json"),
    pytest.param(lambda v: __import__("urllib.parse").parse.quote_plus(v), id="form-encoded"),
    pytest.param(lambda v: __import__("urllib.parse").parse.quote(v, safe="").lower(), id="lower-case-percent"),
    pytest.param(repr, id="python-repr"),
])
def test_every_form_of_a_known_secret_is_redacted(form):
    from harness.redact import Redactor

    text = f"before {form(_SECRET3)} after"
    out = Redactor({"MY_SECRET": _SECRET3}).text(text)
    assert "[redacted:MY_SECRET]" in out and form(_SECRET3) not in out, out


@pytest.mark.parametrize("text, secret", [
    ("https://h/cb#access_token=abcdef123456", "abcdef123456"),
    ("Authorization: Token abcdef1234567890", "abcdef1234567890"),
    ("X-Api-Key: abcdef1234567890abcd", "abcdef1234567890abcd"),
    ('{"password": "hunter2hunter2"}', "hunter2hunter2"),
    ('"client_secret":"abcdefgh1234"', "abcdefgh1234"),
    ("DB_PASSWORD=hunter2hunter2 python bot.py", "hunter2hunter2"),
    ("webhook_secret = 'abc123456789'", "abc123456789"),
])
def test_a_value_named_as_a_secret_is_redacted_unknown(text, secret):
    from harness.redact import Redactor

    assert secret not in Redactor({}).text(text)


@pytest.mark.parametrize("text", [
    'TELEGRAM_BOT_TOKEN = "{bot_token}"',  # a placeholder, not a secret
    '"api_key_env": "OPENAI_API_KEY"',  # names a variable
    '"tokens": {"input": 3}', '"max_tokens": 1000', "password: short",
    'SECRET = os.environ.get("TELEGRAM_WEBHOOK_SECRET")',  # code in a traceback stays readable
    "the secret: is safe with me",
])
def test_text_that_only_looks_like_a_secret_is_kept(text):
    from harness.redact import Redactor

    assert Redactor({}).text(text) == text


def test_the_pending_spool_holds_no_userinfo_password(tmp_path, capsys, monkeypatch):
    """Issue 24: an unreachable storage endpoint written with user:password@ put the password in
    clear into reports/.pending/<run>.json (its last error quotes the URL) though the console had it
    redacted."""
    import sys as _sys

    _sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))
    from ops_support import echo_cases, make_project
    from harness import cli

    password = "Sup3rS3cretPw"
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAABCDEFGHIJKLMNOP")  # with keys, the error is the connection's
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "abcdefgh12345678abcdefgh")
    cfg = make_project(tmp_path, cases=echo_cases(1), extra=(
        '[storage]\nurl = "s3://nightly-x/chat"\n'
        f'endpoint_url = "http://admin:{password}@127.0.0.1:9"\nregion = "us-east-1"\nretries = 0\ntimeout_s = 1\n'))
    assert cli.main(["run", "--config", str(cfg), "--quiet"]) == 0
    out = capsys.readouterr()
    spooled = list((tmp_path / "reports" / ".pending").glob("*.json"))
    assert spooled, "the upload was not kept pending"
    for path in spooled + list((tmp_path / "reports").glob("*/*")):
        if path.is_file():
            assert password not in path.read_text(errors="replace"), path
    assert password not in out.out + out.err


@pytest.mark.parametrize("shown", [
    lambda s: s[:20] + "...",  # an error message cut short, or the agent's own token[:20]
    lambda s: "..." + s[-18:],
    lambda s: s,
])
def test_a_cut_secret_is_redacted_too(shown):
    from harness.redact import Redactor

    secret = "tgAbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    out = Redactor({"TELEGRAM_BOT_TOKEN": secret}).text(f"got {shown(secret)} back")
    assert "[redacted:TELEGRAM_BOT_TOKEN]" in out and secret[:16] not in out and secret[-16:] not in out, out


# -- issue 24, round 3, session 29 (hostileB) ---------------------------------------------------------
_S29 = 'Zq9"Xw\\v7Lp#2Rt&Yk/ Mn+Ab=Cd'
_T29 = "7391045526:AAH3kd9-fjw_Qn2LxpV8rTzYb4cMuE1sOaZ"


def _b64(text: str) -> str:
    import base64

    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize("shown, cleartext", [
    ('"auth": "' + _b64("user:" + _S29) + '"', _b64("user:" + _S29)[8:30]),  # a docker config's auth
    (_b64("ab" + _S29), _b64("ab" + _S29)[4:30]),
    ("Authorization: Basic " + _b64("x" + _T29), _b64("x" + _T29)[4:40]),
    (_T29.encode().hex(), _T29.encode().hex()[10:60]),
    (_T29[:23] + "\n" + _T29[23:], _T29[16:23] + "\n" + _T29[23:30]),  # print(token[:23]); print(token[23:])
    ("\n".join(_b64("user:" + _T29 * 2)[i:i + 64] for i in range(0, 200, 64)), _b64("user:" + _T29 * 2)[60:70]),
    ('{"k": "' + _S29.replace("\\", "\\\\").replace('"', '\\"').replace("&", "\\u0026") + '"}', "2Rt\\u0026Yk"),
])
def test_a_known_secret_inside_base64_hex_go_json_or_cut_by_a_line_break_is_redacted(shown, cleartext):
    r = redact.Redactor({"MY_SECRET": _S29, "bot_token": _T29})
    out = r.text(shown)
    assert cleartext not in out, out
    assert "[redacted:" in out


@pytest.mark.parametrize("text, secret", [
    ("key sk_live_51HxYzAbCdEfGhIjKlMnOpQr", "51HxYzAbCdEfGhIjKlMnOpQr"),
    ("AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "9tSrke72PouQMnMX"),
    ("token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
     "dozjgNryP4J3jVmNHl0w5N"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq98s9Wq2\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA"),
    ("Cookie: sessionid=abcd1234efgh5678ijkl", "abcd1234efgh5678"),
    ("X-Telegram-Bot-Api-Secret-Token: Qm9vYmFyQmF6UXV4MTIzNDU2", "Qm9vYmFyQmF6UXV4"),
    ("login ok token=Abcdefgh12345678XYZ", "Abcdefgh12345678XYZ"),
    ("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),
])
def test_more_key_shapes_are_redacted_unknown(text, secret):
    assert secret not in redact.Redactor().text(text)


@pytest.mark.parametrize("text", [
    "Basic question about pricing", "Basic features include export and search",  # prose, not base64 of user:pw
    "the token count is 1234", "max_tokens: 123456789", "tokens_source: estimated", "see sk_live docs",
    "eyJ is how base64 JSON starts",
])
def test_prose_that_only_looks_like_a_shape_is_kept(text):
    assert redact.Redactor().text(text) == text


def test_bidi_overrides_are_inert():
    assert redact.inert("abc\u202egnp.exe\u2066x\u2069") == "abcgnp.exex"
    assert redact.inert("naïve café 😀") == "naïve café 😀"


def test_a_secret_of_target_env_or_of_any_variable_named_as_one_never_reaches_target_log(tmp_path):
    """Issue 24, session 29: a bot printing the bare value (no name beside it) of a [target.env]
    DB password, or of a CI token in the harness's own environment (not a HARNESS_* name), put it
    in clear into target.log (uploaded with the run). The twin: a plain setting stays readable."""
    write_cases(tmp_path, "h.yaml", HELLO)
    bot_config(tmp_path, "bare", name="bare", env={"MY_DB_PASSWORD": "hunter2-hunter2-x",
                                                  "MY_GREETING": "hello-world-123"},
               tables="[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 5\n")
    proc = harness_cli("run", "--out", tmp_path / "runs", cwd=tmp_path, timeout=120,
                       env={"MY_CI_TOKEN": "ci-token-value-123"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    logs = list((tmp_path / "runs").glob("*/target.log"))
    assert logs
    log = logs[0].read_text()
    assert "using hello-world-123" in log  # the twin: not a secret, kept
    assert "[redacted:MY_DB_PASSWORD]" in log and "[redacted:MY_CI_TOKEN]" in log
    for f in (tmp_path / "runs").rglob("*"):
        if f.is_file():
            data = f.read_bytes()
            assert b"hunter2-hunter2-x" not in data and b"ci-token-value-123" not in data, f


def test_placeholders_and_plain_settings_of_the_config_are_not_secrets(tmp_path, monkeypatch):
    from harness.config import load_config

    cfg = tmp_path / "harness.toml"
    cfg.write_text(textwrap.dedent("""
        [target]
        command = ["python", "bot.py"]
        [target.env]
        TELEGRAM_BOT_TOKEN = "{bot_token}"
        SERVICE_PASSWORD = "s3rvice-pa55word"
        GREETING = "good-morning-all"
        """))
    monkeypatch.setenv("CI_JOB_TOKEN", "job-token-abcdef12")
    monkeypatch.setenv("PLAIN_SETTING", "not-a-secret-value")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "/var/cache/tiktoken-here")  # TOKEN inside a word; a folder
    monkeypatch.setenv("PASSWORD_FILE", "/run/secrets/db-password")  # where the secret is, not the secret
    r = redact.for_config(load_config(cfg))
    out = r.text("s3rvice-pa55word job-token-abcdef12 good-morning-all not-a-secret-value {bot_token} "
                 "/var/cache/tiktoken-here /run/secrets/db-password")
    assert out == ("[redacted:SERVICE_PASSWORD] [redacted:CI_JOB_TOKEN] good-morning-all not-a-secret-value "
                   "{bot_token} /var/cache/tiktoken-here /run/secrets/db-password")


def test_a_token_printed_in_every_careless_form_leaves_no_usable_part(tmp_path):
    """Issue 24, session 29: a bot printing its token cut in two prints with text between, base64
    of ``bot:<token>`` wrapped at 76 columns, hex, percent-encoded in a URL, in its own traceback,
    and replying with it base64-encoded and cut across lines. No artifact of the run, nor the
    console, holds 15 characters of it in a row, in any of those forms (before: up to 29 of its
    45 characters of a cut token stayed in clear, the base64 and the hex whole)."""
    import base64
    import re

    write_cases(tmp_path, "h.yaml", HELLO)
    bot_config(tmp_path, "leakforms", name="forms", tables="[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 5\n")
    token = _token(10)
    proc = harness_cli("run", "--out", tmp_path / "runs", "-v", cwd=tmp_path, timeout=120,
                       env={"HARNESS_BOT_TOKEN": token})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    run = next(p for p in (tmp_path / "runs").iterdir() if p.is_dir())
    log = (run / "target.log").read_text()
    # the twins: what stands around the token stays readable
    assert "url https://api.telegram.org/bot[redacted:HARNESS_BOT_TOKEN]/getMe?x=1" in log, log[:2000]
    assert "could not log in with '[redacted:HARNESS_BOT_TOKEN]'" in log
    forms = {"as is": token, "hex": token.encode().hex(),
             "base64": base64.b64encode(("bot:" + token).encode() * 3).decode(),
             "base64 k:": base64.b64encode(("k:" + token).encode()).decode()}
    texts = {"console": proc.stdout + proc.stderr}
    texts.update({f.name: f.read_text(errors="replace") for f in run.rglob("*") if f.is_file()})
    for where, text in texts.items():
        flat = re.sub(r"\s", "", text)
        for name, form in forms.items():
            for i in range(len(form) - 15):
                assert form[i:i + 15] not in flat, (where, name, form[i:i + 15])


@pytest.mark.parametrize("cuts", [(20, 44), (10, 30, 50), (32,)])
def test_a_long_secret_cut_into_pieces_keeps_no_15_characters_in_clear(cuts):
    secret = "gsk_" + "".join(chr(ord("a") + (i * 7) % 26) + str(i % 10) for i in range(30))  # 64 characters
    bounds = (0, *cuts, len(secret))
    shown = " | ".join(f"part {secret[a:b]}" for a, b in zip(bounds, bounds[1:]))
    out = redact.Redactor({"LLM_KEY": secret}).text(shown)
    for i in range(len(secret) - 15):
        assert secret[i:i + 15] not in out.replace(" | part ", ""), out
    assert out.startswith("part ")  # the twin: the text around the pieces stays


def test_bytes_that_are_not_utf8_go_through_the_same_redaction_and_come_back_exactly():
    """target.log of a bot writing undecodable bytes was redacted by a pattern of its own: no cut or
    split secrets, no prose check ("Basic features" mangled). Now the one text pipeline, the
    bytes around untouched (the twin: no secret, the same bytes back)."""
    token = "7391045526:AAH3kd9-fjw_Qn2LxpV8rTzYb4cMuE1sOaZ"
    r = redact.Redactor({"bot_token": token})
    junk = b"\xff\xfe\x00 garbage \xc3\x28 "
    assert r.binary(junk + b"Basic features here") == junk + b"Basic features here"
    out = r.binary(junk + token[:23].encode() + b"\n" + token[23:].encode() + b" and " + token.encode()[:30])
    assert out.startswith(junk) and b"[redacted:bot_token]" in out
    for i in range(len(token) - 15):
        assert token[i:i + 15].encode() not in out.replace(b"\n", b""), out
