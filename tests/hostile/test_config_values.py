"""harness.toml values that name nothing usable (issue 24, round 3, session 29): a URL that is no
http(s) URL or has a port out of range (exit 70 or 4 after the target started, before), a NUL in
any path or name (exit 70), a layer no layer has, a docs_dir or cassette of the wrong kind, a
[schedule] folder that is not there, a price table with no price. Each is refused by `harness
check` and `harness run` alike, exit 2 with the key and a fix; its well-formed twin is accepted."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ops"))

from ops_support import echo_cases, make_project  # noqa: E402

from harness import cli  # noqa: E402

INPROCESS = 'inprocess = "tests.agents.echo:make_app"'
COMMAND = 'command = ["python", "-c", "import time; time.sleep(60)"]\nport = 0'


def _edit(cfg: Path, old: str, new: str) -> None:
    text = cfg.read_text()
    assert old in text
    cfg.write_text(text.replace(old, new, 1))


#: (where to edit, the bad text, its well-formed twin, what the refusal says)
CASES = [
    (INPROCESS, COMMAND + '\ntelegram_webhook = "http://127.0.0.1:99999/telegram"',
     COMMAND + '\ntelegram_webhook = "http://127.0.0.1:{port}/telegram"',
     "[target] telegram_webhook: 'http://127.0.0.1:99999/telegram' is no URL (Port out of range"),
    (INPROCESS, COMMAND + '\nready_url = "::::"\nready_timeout_s = 2',
     COMMAND + '\nready_url = "http://127.0.0.1:{port}/healthz"\nready_timeout_s = 2', "[target] ready_url: '::::'"),
    (INPROCESS, COMMAND + '\nstate_url = "state please"', COMMAND + '\nstate_url = "http://127.0.0.1:{port}/s/{chat_id}"',
     "state_url 'state please' holds white space"),
    ("[sandbox]", '[sandbox]\nllm_upstream = "ftp://example.com/v1"', '[sandbox]\nllm_upstream = "http://127.0.0.1:{port}/v1"',
     "[sandbox] llm_upstream: 'ftp://example.com/v1' is not an http:// or https:// URL"),
    ("[sandbox]", '[sandbox]\nwhatsapp_api_version = "v1/../.."', '[sandbox]\nwhatsapp_api_version = "v19.0"',
     "[sandbox] whatsapp_api_version"),
    ("[sandbox]", '[sandbox]\ndocs_dir = "harness.toml"', '[sandbox]\ndocs_dir = "fixtures/documents"',
     "docs_dir 'harness.toml' is a file, not a folder"),
    ("[sandbox]", '[sandbox]\nllm_mode = "record"\ncassette = "fixtures"',
     '[sandbox]\nllm_mode = "record"\ncassette = "fixtures/x.jsonl"', "cassette 'fixtures' is a folder, not a file"),
    # a NUL in a path: the OS refused it once the run had started (exit 70)
    ("[sandbox]", '[sandbox]\ndocs_dir = "fix\\u0000tures"', '[sandbox]\ndocs_dir = "fixtures"',
     "[sandbox] docs_dir: 'fix\\x00tures' holds a NUL character"),
    (INPROCESS, COMMAND + '\ncwd = "a\\u0000b"', COMMAND + '\ncwd = "fixtures"',
     "[target] cwd: 'a\\x00b' holds a NUL character"),
    ("[sandbox]", '[suite]\ngolden = "gold\\u0000en"\n[sandbox]', '[suite]\ngolden = "golden"\n[sandbox]',
     "[suite] golden: 'gold\\x00en' holds a NUL"),
    ("[sandbox]", '[embeddings]\ncache_dir = "c\\u0000"\n[sandbox]', '[embeddings]\ncache_dir = "c"\n[sandbox]',
     "[embeddings] cache_dir"),
    # a layer no layer has: the night's `run --layer nope` was refused only at night
    ("[sandbox]", '[schedule]\nlayers = ["robustnes"]\n[sandbox]', '[schedule]\nlayers = ["robustness"]\n[sandbox]',
     "[schedule] layers: 'robustnes' is not a layer"),
    ("[sandbox]", '[budget]\nanomaly_layers = ["nope"]\n[sandbox]', '[budget]\nanomaly_layers = ["cost"]\n[sandbox]',
     "[budget] anomaly_layers: 'nope' is not a layer"),
    ("[sandbox]", '[baseline.layers.robustnes]\nlatency = false\n[sandbox]',
     '[baseline.layers.robustness]\nlatency = false\n[sandbox]', "[baseline] layers: 'robustnes' is not a layer"),
    ("[sandbox]", '[schedule]\nfixtures = "nowhere"\n[sandbox]', '[schedule]\nfixtures = "fixtures"\n[sandbox]',
     "[schedule] fixtures = 'nowhere' does not exist"),
    ("[sandbox]", '[alerts]\nwebhook_url = "javascript:alert(1)"\n[sandbox]',
     '[alerts]\nwebhook_url = "http://127.0.0.1:9/hook"\n[sandbox]', "[alerts] webhook_url: 'javascript:alert(1)'"),
    # a price table with no price (every cost unavailable) or a price that is nan
    ("[sandbox]", '[budget]\nprices = "harness.toml"\n[sandbox]', '[budget]\nprices = "prices.toml"\n[sandbox]',
     "holds no price"),
    ("[sandbox]", '[budget]\nprices = "nan-prices.toml"\n[sandbox]', '[budget]\nprices = "prices.toml"\n[sandbox]',
     "a price is a finite number >= 0"),
]

PRICES = 'version = "t"\n[providers.openai.models."gpt-4o-mini"]\ninput_per_m = {x}\noutput_per_m = 0.6\n'


@pytest.mark.parametrize("where, bad, good, says", CASES, ids=[c[3][:40] for c in CASES])
@pytest.mark.parametrize("command", ["check", "run"])
def test_config_values_that_name_nothing_usable_are_refused(tmp_path, capsys, command, where, bad, good, says):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    (tmp_path / "prices.toml").write_text(PRICES.format(x="0.15"))
    (tmp_path / "nan-prices.toml").write_text(PRICES.format(x="nan"))
    text = cfg.read_text()
    _edit(cfg, where, bad)
    argv = [command, "--config", str(cfg), *(["--quiet", "--no-upload"] if command == "run" else [])]
    capsys.readouterr()
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and "fix:" in err and "internal error" not in err, err
    cfg.write_text(text)
    _edit(cfg, where, good)
    if command == "run" and "command" in good:
        return  # a twin that starts a bot which never answers is judged by check only
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code in (0, 1) and "internal error" not in err, err  # the twin is accepted


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_storage_prefix_longer_than_an_s3_key_can_hold_is_refused(tmp_path, capsys, command):
    """S3 refuses keys over 1,024 bytes; a prefix that leaves no room for a run's keys made every
    upload fail at night (the loopback store in tests takes them; real S3 answers KeyTooLongError)."""
    cfg = make_project(tmp_path, cases=echo_cases(1))
    text = cfg.read_text()
    cfg.write_text(text + '[storage]\nurl = "s3://nightly-evals/' + "p" * 900 + '"\n')
    argv = [command, "--config", str(cfg), *(["--quiet", "--no-upload"] if command == "run" else [])]
    capsys.readouterr()
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "S3 keys are at most 1,024 bytes" in err and len(err) < 1500, err
    cfg.write_text(text + '[storage]\nurl = "s3://nightly-evals/' + "p" * 800 + '"\n')
    assert cli.main(argv) == 0


@pytest.mark.parametrize("target, sandbox, says", [
    # the URL kept the text {port}: the run crashed (exit 70, "Port could not be cast to integer value")
    ('command = ["python", "-c", "pass"]\ntelegram_webhook = "http://127.0.0.1:{port}/telegram"', "",
     "{port} is used in telegram_webhook but port is not set"),
    ('command = ["python", "-c", "pass", "--port", "{port}"]', "", "{port} is used in command but port is not set"),
    ('command = ["python", "-c", "pass"]', 'llm_upstream = "http://127.0.0.1:{port}/v1"',
     "[sandbox] llm_upstream uses {port} (the target's port) but [target] port is not set"),
])
@pytest.mark.parametrize("command", ["check", "run"])
def test_a_port_placeholder_without_a_port_is_refused(tmp_path, capsys, command, target, sandbox, says):
    cfg = make_project(tmp_path, cases=echo_cases(1))
    text = cfg.read_text().replace(INPROCESS, target).replace("[sandbox]", "[sandbox]\n" + sandbox)
    cfg.write_text(text)
    argv = [command, "--config", str(cfg), *(["--quiet", "--no-upload"] if command == "run" else [])]
    capsys.readouterr()
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and "add port = 0" in err and "internal error" not in err, err
    cfg.write_text(text.replace(target, target + "\nport = 0"))
    assert cli.main(["check", "--config", str(cfg)]) == 0  # the twin


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_schedule_selection_matching_no_case_is_refused(tmp_path, capsys, command):
    """`check` said 0 and every nightly cycle's run was refused ("failed to start", an alert a night)."""
    cfg = make_project(tmp_path, cases=echo_cases(1))
    text = cfg.read_text()
    cfg.write_text(text.replace("[sandbox]", '[schedule]\ncases = ["nomatch*"]\n[sandbox]'))
    argv = [command, "--config", str(cfg), *(["--quiet", "--no-upload"] if command == "run" else [])]
    capsys.readouterr()
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "[schedule] cases ['nomatch*'] match no case" in err and "fix:" in err, err
    cfg.write_text(text.replace("[sandbox]", '[schedule]\ncases = ["echo-*"]\n[sandbox]'))
    assert cli.main(argv) == 0
