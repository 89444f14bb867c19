"""Check parameters come from the checks' own types (harness/checks/params.py): a wrong one is a
fixture error naming the file, the case, the key's line, the key and a fix; its right twin loads.

Each row: a check's parameters as a case file writes them (YAML flow), and what the error must
say (None: the twin that must load)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.cases import load_cases
from harness.checks import REGISTRY
from harness.errors import FixtureError

TABLE = [
    # wrong type
    ("replies: {min: '1'}", "expect.replies.min: input should be a valid integer", "write a whole number"),
    ("replies: {min: 1}", None, None),
    ("reply: {max_chars: true}", "expect.reply.max_chars: input should be a valid integer", "e.g. reply: {max_chars: 280}"),
    ("reply: {max_chars: 280}", None, None),
    ("latency_ms: {first_reply_max: 3s}", "expect.latency_ms.first_reply_max: input should be a valid number",
     "e.g. latency_ms: {first_reply_max: 3000"),
    ("latency_ms: {first_reply_max: 3000}", None, None),
    ("tools_called: 5", "expect.tools_called: must be text or a list, got 5", "write text or a list"),
    ("tools_called: [fetch_document]", None, None),
    ("delivery: {status: '200'}", "expect.delivery.status: input should be a valid integer", "e.g. delivery: {status: 200}"),
    ("delivery: {status: 200}", None, None),
    ("callbacks_answered: 'yes'", "expect.callbacks_answered: input should be true", "e.g. callbacks_answered: true"),
    ("no_leak: true", None, None),
    ("reply: {json: false}", "expect.reply.json: must be true or a table", "write true or a table"),
    ("reply: {json: {required: [summary]}}", None, None),
    # out of range
    ("replies: {max: -1}", "expect.replies.max: input should be greater than or equal to 0", "write a number >= 0"),
    ("replies: {max: 0}", None, None),
    ("error_rate: {max: 1.5}", "expect.error_rate.max: input should be less than or equal to 1", "write a number <= 1"),
    ("error_rate: {max: 1}", None, None),
    ("similarity: {min: 0.5, fail_below: 0.7}", "expect.similarity: fail_below must not exceed min",
     "make fail_below <= min"),
    ("similarity: {min: 0.7, fail_below: 0.5}", None, None),
    ("replies: {min: 3, max: 1}", "expect.replies: min 3 is greater than max 1", "make min <= max"),
    ("replies: {min: 1, max: 3}", None, None),
    ("replies: {exact: 1, min: 1}", "expect.replies: use either exact or min/max", "replies: {exact: 1}"),
    ("replies: {exact: 1}", None, None),
    ("tool_order: [fetch_document]", "expect.tool_order: must have at least 2 items", "add items of tool_order"),
    ("tool_order: [fetch_document, llm]", None, None),
    ("reply: {language: english}", "expect.reply.language: input should be 'en', 'es', 'fr', 'de', 'pt' or 'it'",
     "e.g. reply: {language: en}"),
    ("reply: {language: de}", None, None),
    ("cost_usd: {}", "expect.cost_usd.max: missing required key 'max'", "add max"),
    ("cost_usd: {max: 0.03}", None, None),
    ("llm_calls: {}", "expect.llm_calls: needs at least one of min, max", "e.g. {min: 1}"),
    ("llm_calls: {max: 2}", None, None),
    # unknown key (a did-you-mean where one is close)
    ("replies: {maxx: 1}", "expect.replies: unknown key 'maxx'", "did you mean 'max'? (replies takes min, max, exact)"),
    ("retry_wait: {of: llm, min_secs: 1}", "expect.retry_wait: unknown key 'min_secs'", "did you mean 'min_s'?"),
    ("retry_wait: {of: llm, min_s: 1}", None, None),
    ("reply: {entities: {blink: x}}", "expect.reply.entities: unknown key 'blink'", "reply.entities takes bold, italic"),
    ("reply: {entities: {bold: Tuesday}}", None, None),
    ("critic: {rubric: {question: 'ok?', mn: 0.5}}", "expect.critic.rubric: unknown key 'mn'", "did you mean 'min'?"),
    ("critic: {rubric: {question: 'ok?', min: 0.5}}", None, None),
    ("slots: {mood: happy}", "expect.slots.mood: unknown slot 'mood'", "name a known slot"),
    ("slots: {platform: linkedin}", None, None),
    ("reply: {regexp: x}", "unknown check 'reply.regexp'", "did you mean 'reply.regex'?"),
    # bad regex
    ("reply: {regex: '(unclosed'}", "expect.reply.regex: invalid regular expression '(unclosed'",
     "close the group; Python `re` syntax"),
    ("reply: {regex: '\\(unclosed'}", None, None),
    ("calls_after: {reply_regex: '[a-', max: 0}", "expect.calls_after.reply_regex: invalid regular expression",
     "e.g. calls_after: {reply_regex"),
    ("calls_after: {reply_regex: '(?i)cancel', max: 0}", None, None),
    ("state: {$.task: {regex: '*x'}}", "expect.state.$.task: bad regex '*x'", "correct the pattern"),
    ("state: {$.task: {regex: 'x*'}}", None, None),
    ("state: {task: null}", "expect.state.task: path 'task' is not a simple JSON path", "e.g. \"$.task\""),
    ("state: {$.task: null}", None, None),
]


def _load(tmp_path: Path, expect: str):
    folder = tmp_path / "robustness"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "params.yaml"
    path.write_text(textwrap.dedent(f"""\
        layer: robustness
        cases:
          - id: first
            send: hi
            expect: {{replies: {{min: 1}}}}
          - id: the-case
            send: hi
            expect:
              {expect}
        """), encoding="utf-8")
    return path, lambda: load_cases(tmp_path, derive=False)


@pytest.mark.parametrize("expect,message,fix", TABLE, ids=[f"{i}-{row[0]}" for i, row in enumerate(TABLE)])
def test_check_parameters_are_refused_with_file_case_line_key_and_fix(tmp_path, expect, message, fix):
    path, load = _load(tmp_path, expect)
    if message is None:
        cases = load()
        assert [c.id for c in cases] == ["first", "the-case"]
        return
    with pytest.raises(FixtureError) as info:
        load()
    rendered = info.value.render()
    assert f"{path}:9: case 'the-case': " in rendered, rendered  # the file, the key's own line, the case
    assert message in rendered, rendered
    assert f"fix: " in rendered and fix in rendered.split("fix: ", 1)[1], rendered
    assert "Traceback" not in rendered and "pydantic" not in rendered.lower()


@pytest.mark.parametrize("name,good,bad", [
    ("replies", {"min": 1}, {"min": 1.5}),
    ("reply.regex", "(?i)ok", "(?i"),
    ("tool_args", {"create_order": {"$.lines[0].sku": "W-1"}}, {"create_order": {"$.lines[x]": 1}}),
    ("equivalent", {"to": 0}, {"to": -1}),
    ("attachments", {}, {"kind": "video"}),
    ("critic.factuality", True, False),
    ("max_calls", {"llm": 2}, {"llm": True}),
])
def test_a_check_validates_one_value_with_the_same_type(name, good, bad):
    """``CheckDef.validate`` (what plugins and tests call) and the schema share the type."""
    assert REGISTRY[name].validate(good) is None
    problem = REGISTRY[name].validate(bad)
    assert problem and "; fix: " in problem, problem


def test_a_plugin_check_registered_with_a_validator_still_loads_with_a_warning(tmp_path):
    """A third-party check written before the types (``CheckDef(name, fn, validator, ...)``) keeps
    working: its validator refuses what it refused, the schema takes its value as any value."""
    from harness.checks import register
    from harness.checks.base import CheckDef

    def validator(value):
        return None if value in ("left", "right") else f"takes left or right, got {value!r}"

    with pytest.warns(DeprecationWarning, match="parameters' type"):
        definition = CheckDef("test_plugin_switch", lambda *a: None, validator, "plugin@1")
    assert definition.validate("left") is None and "takes left or right" in definition.validate("maybe")
    register(definition)
    try:
        path, load = _load(tmp_path, "test_plugin_switch: maybe")
        with pytest.raises(FixtureError) as info:
            load()
        assert "expect.test_plugin_switch: takes left or right, got 'maybe'" in info.value.render()
        path.write_text(path.read_text().replace("maybe", "left"), encoding="utf-8")
        assert [c.id for c in load()] == ["first", "the-case"]
    finally:
        REGISTRY.pop("test_plugin_switch")
