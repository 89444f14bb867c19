"""Every default check can be switched off per case as docs/CASES.md promises (issue 21):
``<check>: false`` on a turn keeps the layer (or the engine) from adding it there, ``anomaly:
false`` drops the case's history anomalies, and ``false`` on a check no layer adds, or one the
case's own layer does not add, is a fixture error naming the fix."""

from __future__ import annotations

import textwrap

import pytest

from harness import layer as layer_registry
from harness.cases import load_cases
from harness.cases.keys import ANOMALY_METRICS, ENGINE_DEFAULTS
from harness.config import load_config
from harness.errors import FixtureErrors
from harness.run.anomaly import METRICS
from harness.run.perf import RunMeter
from tests.cost.test_cost_checks_anomaly_budget import history, result  # noqa: F401 (fixture)

CONTEXT = {"state_probe": True}


def _load(tmp_path, layer: str, expect: str, action: str = 'send: "hello"', channel: str = "telegram"):
    """A two-turn case whose second turn writes ``expect`` beside a check no layer adds."""
    folder = tmp_path / "fx" / layer
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "a.yaml").write_text(textwrap.dedent(f"""
        layer: {layer}
        defaults: {{channel: {channel}, variants: none}}
        cases:
          - id: a
            turns:
              - send: "hello"
                expect: {{replies: {{min: 1}}}}
              - {action}
                expect: {{reply: {{not_contains: [Traceback]}}{expect}}}
        """))
    (case,) = load_cases(tmp_path / "fx", derive=False)
    return layer_registry.with_default_checks(case, CONTEXT)


DEFAULTS = [(layer.name, name) for layer in layer_registry.all_layers() for name in layer.default_names]


def test_every_layer_declares_what_it_adds():
    """default_names is the truth the loader trusts: each layer adds nothing beyond it."""
    from harness.types import Case, CheckSpec, Turn

    for layer in layer_registry.all_layers():
        turns = (Turn(send="hi"), Turn(send="hi", checks=(CheckSpec("replies", {"min": 1}),)),
                 Turn(send="hi", kind="forged"))
        case = Case(id="x", layer=layer.name, channel="telegram", turns=turns)
        added = {s.name for i in range(len(turns)) for ctx in ({}, CONTEXT)
                 for s in layer.default_checks(case, i, ctx)}
        assert added <= set(layer.default_names), (layer.name, added)
    assert {n for _, n in DEFAULTS} == {"no_leak", "webhook_2xx", "answered", "state_probed", "metered"}


@pytest.mark.parametrize("layer, name", DEFAULTS)
def test_a_layer_default_switched_off(tmp_path, layer, name):
    off = _load(tmp_path, layer, f", {name}: false")
    assert name not in {s.name for s in off.turns[1].checks} and name in off.turns[1].disabled
    assert name in {s.name for s in off.turns[0].checks} or name == "answered"  # only that turn
    on = _load(tmp_path / "twin", layer, "")  # the right twin: without false, the default is there
    assert name in {s.name for s in on.turns[1].checks}


def test_callbacks_answered_false_is_accepted_and_switches_it_off(tmp_path):
    off = _load(tmp_path, "multiturn", ", callbacks_answered: false", action='callback: "ok"')
    assert "callbacks_answered" not in {s.name for s in off.turns[1].checks}
    on = _load(tmp_path / "on", "multiturn", "", action='callback: "ok"')
    assert "callbacks_answered" in {s.name for s in on.turns[1].checks}
    assert ENGINE_DEFAULTS == ("callbacks_answered",)


@pytest.mark.parametrize("expect, problem", [
    (", typing_before_reply: false", "typing_before_reply: false switches off a default check"),
    (", metered: false", "metered: false: the multiturn layer does not add this check by default"),
    (", anomaly: true", "anomaly takes false"),
    (", anomaly: {latency: false}", "anomaly takes false"),
])
def test_false_where_nothing_is_switched_off_is_a_fixture_error(tmp_path, expect, problem):
    with pytest.raises(FixtureErrors, match=problem):
        _load(tmp_path, "multiturn", expect)


def test_the_anomaly_metrics_are_the_history_s_own():
    assert set(ANOMALY_METRICS) == set(METRICS)


@pytest.mark.parametrize("expect, dropped", [
    (", anomaly: false", {"anomaly.tokens", "anomaly.llm_calls", "anomaly.cost_usd"}),
    (", anomaly: {tokens: false}", {"anomaly.tokens"}),
    ("", set()),  # the right twin: every anomaly stands
])
def test_anomaly_false_drops_the_case_s_anomalies(tmp_path, history, expect, dropped):  # noqa: F811
    case = _load(tmp_path, "cost", expect)
    meter = RunMeter(load_config(None, environ={}), tmp_path, "20261108-000000-dddd")
    meter.history = history
    done = meter.finish(case, [], result(id="c1", tokens_in=1900, calls=5, cost=0.0081))
    found = {e.check for e in done.evidence}
    assert found == {"anomaly.tokens", "anomaly.llm_calls", "anomaly.cost_usd"} - dropped
    assert done.status == ("fail" if found else "pass")
