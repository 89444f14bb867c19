"""[baseline] and a case's baseline: key: precedence, validation, clear errors."""

from __future__ import annotations

import textwrap

import pytest

from harness.checks.baseline.settings import KINDS, baseline_settings, case_setting_error
from harness.schema.models import BaselineModel
from harness.config import load_config
from harness.errors import ConfigError


def test_precedence_case_over_layer_over_project():
    s = BaselineModel(latency=False, layers={"cost": {"facts": False}, "robustness": {"enabled": False}})
    assert "latency" not in s.kinds_for("reasoning")
    assert "facts" not in s.kinds_for("cost") and "facts" in s.kinds_for("reasoning")
    assert s.kinds_for("robustness") == frozenset()
    assert s.kinds_for("robustness", True) == frozenset(KINDS) - {"latency"}
    assert s.kinds_for("reasoning", False) == frozenset()
    assert s.kinds_for("reasoning", {"latency": True, "facts": False}) == frozenset(KINDS) - {"facts"}
    assert BaselineModel(enabled=False).kinds_for("reasoning") == frozenset()


@pytest.mark.parametrize("value, error", [
    (False, None), (True, None), ({"facts": False, "latency": False}, None),
    ({"fact": False}, "unknown kind"), ({"facts": "no"}, "true or false"), ("off", "must be true or false or a table"),
])
def test_case_setting_error(value, error):
    got = case_setting_error(value)
    assert (got is None) if error is None else (error in got)


def _config(tmp_path, body, environ=None):
    path = tmp_path / "harness.toml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return load_config(path, environ=environ or {})


def test_config_section_read(tmp_path):
    cfg = _config(tmp_path, """
        [baseline]
        min_nights = 2
        latency = false
        [baseline.layers.cost]
        tokens = false
        """)
    s = baseline_settings(cfg)
    assert s.min_nights == 2 and "latency" not in s.kinds_for("reasoning") and "tokens" not in s.kinds_for("cost")


def test_env_override(tmp_path):
    cfg = _config(tmp_path, "[baseline]\n", {"HARNESS_BASELINE_ENABLED": "false", "HARNESS_BASELINE_MIN_NIGHTS": "5"})
    s = baseline_settings(cfg)
    assert s.enabled is False and s.min_nights == 5


@pytest.mark.parametrize("body, where", [
    ("[baseline]\nmin_night = 2\n", "min_night"),
    ("[baseline]\nmin_nights = 0\n", "min_nights"),
    ("[baseline.layers.cost]\nfact = false\n", "fact"),
])
def test_bad_config_names_the_key(tmp_path, body, where):
    with pytest.raises(ConfigError) as err:
        _config(tmp_path, body)
    assert where in str(err.value)


def _suite(tmp_path, baseline_line):
    folder = tmp_path / "robustness"
    folder.mkdir()
    (folder / "a.yaml").write_text(textwrap.dedent(f"""\
        layer: robustness
        defaults: {{channel: telegram}}
        cases:
          - id: one
            send: "hello"
            {baseline_line}
            expect: {{replies: {{min: 1}}}}
        """), encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("line, value", [
    ("baseline: false", False),
    ("baseline: {facts: false, latency: false}", {"facts": False, "latency": False}),
    ("description: no baseline key", None),
])
def test_case_key_loads(tmp_path, line, value):
    from harness.cases import load_cases

    assert load_cases(_suite(tmp_path, line))[0].baseline == value


@pytest.mark.parametrize("line, message", [
    ("baseline: {fact: false}", "'fact'"),
    ("baseline: {facts: 3}", "baseline"),
    ("baseline: sometimes", "baseline"),
])
def test_bad_case_key_is_a_fixture_error(tmp_path, line, message):
    from harness.cases import load_cases
    from harness.errors import FixtureError

    with pytest.raises(FixtureError) as info:
        load_cases(_suite(tmp_path, line))
    rendered = info.value.render()
    assert message in rendered and "a.yaml" in rendered and "one" in rendered


def test_token_count_keys_are_no_secrets(tmp_path):
    cfg = _config(tmp_path, "[budget]\nanomaly_min_tokens = 60\n[baseline]\ntokens_tolerance = 0.3\ntokens = false\n")
    assert cfg.sections["budget"]["anomaly_min_tokens"] == 60 and baseline_settings(cfg).tokens_tolerance == 0.3
