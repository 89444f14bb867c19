"""The config is its pydantic models (issue 23 item 2): what harness.toml says reaches the code as
the frozen section models, with the environment's types, the rules between keys checked at load,
and the secrets kept out of every repr and dump."""

from __future__ import annotations

import textwrap
from types import SimpleNamespace

import pytest
from pydantic import ValidationError

from harness.config import config_section, load_config
from harness.errors import ConfigError
from harness.night.alerts import alert_settings
from harness.schema.models import AlertsModel, StorageModel


def _load(tmp_path, body: str, environ: dict | None = None):
    path = tmp_path / "harness.toml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return load_config(path, environ=environ or {})


@pytest.mark.parametrize("body, problem, fix", [
    ('[critic]\nbackend = "openai"\n', "[critic]: backend 'openai' needs a model", 'model = "gpt-4o-mini"'),
    ("[critic]\nsupport_min = 0.3\nunsupported_below = 0.4\n", "unsupported_below <= support_min", "support_min = 0.55"),
    ("[embeddings]\nthreshold = 0.4\nfail_below = 0.5\n", "fail_below <= threshold", "threshold = 0.75"),
])
def test_rules_between_keys_are_config_errors_at_load(tmp_path, body, problem, fix):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "[target]\nname = \"x\"\n" + body)
    assert problem in err.value.message and fix in (err.value.fix or "")
    assert err.value.line == 3  # the section's line in the file


@pytest.mark.parametrize("body", [
    '[critic]\nbackend = "openai"\nmodel = "gpt-4o-mini"\n',
    "[critic]\nsupport_min = 0.4\nunsupported_below = 0.4\n",
    "[embeddings]\nthreshold = 0.5\nfail_below = 0.5\n",
])
def test_their_right_twins_load(tmp_path, body):
    _load(tmp_path, "[target]\nname = \"x\"\n" + body)


def test_the_sections_are_frozen_models_with_the_codes_types(tmp_path):
    cfg = _load(tmp_path, """
        [target]
        command = "python -m bot"
        env = {DEBUG = 1, NAME = "x"}
        [budget]
        anomaly_layers = ["cost"]
        [alerts]
        telegram_chat_id = -1001
        smtp_to = "team@example.org"
        retries = 0
        """)
    assert cfg.target.command == ("python", "-m", "bot") and cfg.target.env == {"DEBUG": "1", "NAME": "x"}
    assert cfg.settings.budget.anomaly_layers == ("cost",)
    alerts = cfg.settings.alerts
    assert alerts.telegram_chat_id == "-1001" and alerts.smtp_to == ("team@example.org",) and alerts.retries == 1
    assert cfg.settings.storage is None and cfg.settings.baseline.enabled is True
    with pytest.raises(ValidationError):
        cfg.target.name = "other"  # frozen: nothing changes a loaded section behind the run's back
    changed = cfg.with_sections(target=cfg.target.model_copy(update={"name": "other"}))
    assert changed.target.name == "other" and cfg.target.name == "target"


def test_environment_values_take_the_keys_types(tmp_path):
    cfg = _load(tmp_path, "[target]\nname = \"x\"\n", {
        "HARNESS_TARGET_VERSION": "1.10", "HARNESS_TARGET_PORT": "8080", "HARNESS_TARGET_COMMAND": "python -m bot",
        "HARNESS_TARGET_ENV_LEVEL": "2", "HARNESS_CRITIC_MODEL": "4", "HARNESS_BUDGET_ANOMALY_WINDOW": "3"})
    assert cfg.target.version == "1.10" and cfg.target.port == 8080 and cfg.target.command == ("python", "-m", "bot")
    assert cfg.target.env["LEVEL"] == "2" and cfg.settings.critic.model == "4"
    assert cfg.settings.budget.anomaly_window == 3


def test_alert_secrets_are_in_no_repr_dump_or_schema(tmp_path):
    cfg = _load(tmp_path, '[alerts]\ntelegram_chat_id = "-1"\ntelegram_token_env = "TG"\nsmtp_password_env = "PW"\n'
                          'webhook_url_env = "HOOK"\nwebhook_url = "http://127.0.0.1:9/public"\n')
    s = alert_settings(cfg, environ={"TG": "123:sekrit-token", "PW": "pw-sekrit", "HOOK": "http://hook/sekrit"})
    assert (s.telegram_token, s.smtp_password, s.webhook) == ("123:sekrit-token", "pw-sekrit", "http://hook/sekrit")
    for shown in (repr(s), str(s), s.model_dump_json(), str(s.model_dump()), str(AlertsModel.model_json_schema())):
        assert "sekrit" not in shown
    assert alert_settings(cfg, environ={}).webhook == "http://127.0.0.1:9/public"  # the file's, when no secret one


def test_a_stand_in_with_raw_sections_is_validated_too():
    stand_in = SimpleNamespace(sections={"critic": {"backend": "bogus"}}, path="x.toml")
    with pytest.raises(ConfigError, match=r"\[critic\] backend") as err:
        config_section(stand_in, "critic")
    assert err.value.fix
    assert config_section(SimpleNamespace(sections={}), "critic").backend == "offline"
    assert config_section(SimpleNamespace(sections={}), "storage") is None


@pytest.mark.parametrize("url, bucket, prefix, key", [
    ("s3://nightly-evals/chatbot/", "nightly-evals", "chatbot", "chatbot/runs/x"),
    ("s3://nightly-evals", "nightly-evals", "", "runs/x"),
    ("s3://nightly-evals/a/b", "nightly-evals", "a/b", "a/b/runs/x"),
])
def test_storage_bucket_prefix_and_key_come_from_the_url(url, bucket, prefix, key):
    sc = StorageModel(url=url)
    assert (sc.bucket, sc.prefix, sc.key("runs", "x")) == (bucket, prefix, key)


def test_an_environment_toml_array_is_read_as_one(tmp_path):
    """HARNESS_TARGET_COMMAND='["python", "bot.py"]' is an argv, not the words '["python",' and
    '"bot.py"]' (the schema once turned it back into a string and split it)."""
    cfg = _load(tmp_path, "[target]\nname = \"x\"\n", {"HARNESS_TARGET_COMMAND": '["python", "my bot.py"]'})
    assert cfg.target.command == ("python", "my bot.py")


@pytest.mark.parametrize("toml, line", [
    ('[target]\nname = "x"\n\n[target.env]\nGOOD = "1"\n"BAD=NAME" = "2"\n', 4),  # the [target.env] table
    ('[target]\nname = "x"\nenv = {"BAD=NAME" = "2"}\n', 3),                   # an inline table
])
def test_a_bad_target_env_is_refused_at_its_table(tmp_path, toml, line):
    """issue 24: a refused [target.env] name was reported at harness.toml:1 (the [target] line)."""
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, toml)
    assert info.value.line == line and "BAD=NAME" in info.value.message
