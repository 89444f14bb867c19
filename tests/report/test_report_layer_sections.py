"""A layer's section of report.html: data drawn and escaped by a template (``report_section`` and
``report_template``); a plugin's HTML string (``report_html``) is still shown, with a
DeprecationWarning; a section that raises is named, never a lost report."""

from __future__ import annotations

import warnings

import pytest

from harness import layer as layer_registry
from harness.layer import Layer
from harness.layers import _common, cost, multiturn, reasoning, robustness
from harness.report.html import layer_sections, render_html

XSS = "<script>alert(1)</script>"


@pytest.fixture
def extra_layer():
    """Register one layer for a test; the registry is reloaded afterwards."""
    def add(layer: Layer) -> Layer:
        layer_registry._load()
        layer_registry._add(layer, "test")
        return layer

    yield add
    layer_registry.reload()


def results(name: str, block: dict) -> dict:
    return {"schema": "harness.results/1", "run_id": "r1", "summary": {"verdict": "pass"}, "layers": {name: block},
            "cases": []}


def test_a_data_section_is_drawn_and_escaped(extra_layer):
    extra_layer(Layer(name="manners", title=f"Manners {XSS}", report_section=lambda m: {"tables": [
        _common.table(f"T {XSS}", ("a", XSS), [[XSS, 1]], note=XSS, anchor='x" onload="y')]}))
    page = render_html(results("manners", {"n": 1}))
    assert XSS not in page and page.count("<script") == 1  # the page's own filter only
    assert "<h2>Manners &lt;script&gt;alert(1)&lt;/script&gt;</h2>" in page
    assert '<section id="x&quot; onload=&quot;y"><h3>T &lt;script&gt;' in page
    assert "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td><td>1</td>" in page


def test_no_data_means_no_section(extra_layer):
    extra_layer(Layer(name="quiet", title="Quiet", report_section=lambda m: None))
    assert layer_sections(results("quiet", {})) == []
    extra_layer(Layer(name="none", title="None"))  # neither report_section nor report_html
    assert layer_sections(results("none", {})) == []


def test_a_plugin_html_string_still_shows_with_a_deprecation_warning(extra_layer):
    extra_layer(Layer(name="legacy", title="Legacy", report_html=lambda m: "<p id='legacy'>kept</p>"))
    with pytest.warns(DeprecationWarning, match="report_html"):
        sections = layer_sections(results("legacy", {}))
    assert [str(s["body"]) for s in sections] == ["<p id='legacy'>kept</p>"]


def test_a_data_section_gives_no_warning(extra_layer):
    extra_layer(Layer(name="modern", title="Modern", report_section=lambda m: {"empty": "nothing yet"}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sections = layer_sections(results("modern", {}))
    assert '<p class="muted">nothing yet</p>' in str(sections[0]["body"])


def test_a_section_that_raises_is_named_not_lost(extra_layer):
    def broken(m):
        raise KeyError(XSS)

    extra_layer(Layer(name="broken", title="Broken", report_section=broken))
    page = render_html(results("broken", {}))
    assert "the broken layer's section failed: KeyError: " in page and XSS not in page


def test_a_misspelt_field_in_a_template_fails_loudly(extra_layer):
    """StrictUndefined: the robustness template reads variants' fields by name."""
    extra_layer(Layer(name="typo", title="Typo", report_section=lambda m: {"variants": {"passed": 1}},
                      report_template="layers/robustness.html.j2"))
    page = render_html(results("typo", {}))
    assert "the typo layer's section failed: UndefinedError" in page


@pytest.mark.parametrize("layer, block, shown", [
    (robustness, {"tags": {"url": {"cases": 2, "passed": 1}}, "variants": {"cases": 4, "passed": 3, "changed": []}},
     ["Robustness: pass rate per tag", "<td>url</td><td>2</td><td>1</td><td>50%</td>",
      "Metamorphic variants: <b>3/4</b> answered like their originals (75%); changed: none"]),
    (reasoning, {}, ['<p class="muted">no similarity scores in this run</p>']),
    (multiturn, {"repeats": {"k": 3, "cases": 2, "pass_at_k": 2, "pass_hat_k": 1}},
     ['<section id="layer-multiturn"><h3>Multi-turn: repeats</h3>', "<td>3</td><td>2</td><td>2</td><td>1</td>"]),
    (cost, {"latency": {"last_reply_ms": {"p50": 100.0, "p95": 250.0}}, "tokens": {"input": 3, "output": 4}},
     ["<td>100ms</td><td>250ms</td><td>7</td><td>-</td><td>-</td>"]),
])
def test_builtin_layers_give_data(layer, block, shown):
    section = layer.LAYER.report_section(block)
    assert isinstance(section, dict)
    page = render_html(results(layer.LAYER.name, block))
    for text in shown:
        assert text in page, text


def test_multiturn_without_repeats_has_no_section():
    assert multiturn.LAYER.report_section({}) is None
    assert "Multi-turn state" not in render_html(results("multiturn", {}))


def test_a_layer_built_with_positional_arguments_keeps_its_meaning():
    """The new fields come last: an older plugin's positional Layer(...) still sets report_html."""
    def html(m):
        return "<p>old</p>"

    old = Layer("old", "Old", "", "", 100, (), lambda c, t, x: (), lambda r, x: {}, html)
    assert old.report_html is html and old.report_section is None
    assert Layer(name="x", title="X").report_html({}) == ""  # still callable by code that calls it
