"""``model:`` (the model double's script) in case files: where it may stand, what it applies
to, and the errors a wrong one gets (file, case, key and a fix; never a traceback)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.cases import load_cases
from harness.errors import FixtureError


def _write(root: Path, text: str) -> Path:
    (root / "cost").mkdir(parents=True, exist_ok=True)
    path = root / "cost" / "shop.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_where_a_script_applies(tmp_path):
    _write(tmp_path, """
        layer: cost
        defaults:
          model: {text: "from the defaults"}
        cases:
          - id: turn-level
            send: "order 3 widgets"
            model:
              - tool_calls: [{name: create_order, arguments: {item: widget, quantity: 3}}]
              - text: "Order {tool_result.id} is {tool_result.status}"
            expect: {reply: {contains: "A-17"}}
          - id: case-level
            model: {text: "every turn"}
            turns:
              - send: one
                expect: {replies: {min: 1}}
              - send: two
                model: [{refusal: "no"}]
                expect: {replies: {min: 1}}
          - id: from-defaults
            send: hi
            expect: {replies: {min: 1}}
        """)
    by = {c.id: c for c in load_cases(tmp_path)}
    assert by["turn-level"].turns[0].model[0]["tool_calls"][0]["arguments"] == {"item": "widget", "quantity": 3}
    assert len(by["turn-level"].turns[0].model) == 2
    assert [t.model for t in by["case-level"].turns] == [({"text": "every turn"},), ({"refusal": "no"},)]
    assert by["from-defaults"].turns[0].model == ({"text": "from the defaults"},)


@pytest.mark.parametrize("script,message", [
    ('{txt: "a"}', "model step 0: unknown key(s) ['txt']"),
    ("[]", "model must be a step or a list of steps"),
    ('[{text: "a"}, {status: 200}]', "model step 1: status must be an HTTP error (400-599), got 200"),
    ("[{tool_calls: [{arguments: {q: 1}}]}]", "tool_calls[0] needs a name"),
    ('[{text: "a", stream: "yes"}]', "stream must be true or false"),
])
def test_a_wrong_script_names_file_case_turn_and_the_fix(tmp_path, script, message):
    path = _write(tmp_path, f"""
        layer: cost
        cases:
          - id: broken
            send: hi
            model: {script}
            expect: {{replies: {{min: 1}}}}
        """)
    with pytest.raises(FixtureError) as info:
        load_cases(tmp_path)
    rendered = info.value.render()
    assert str(path) in rendered and "case 'broken'" in rendered and message in rendered
    assert "fix:" in rendered and "Traceback" not in rendered
