"""A fifth layer from a temporary package: registered by entry point, run with no engine change."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from harness import layer as layer_registry
from harness.cases import load_cases
from harness.config import load_config
from harness.errors import FixtureErrors
from harness.report import write_all
from harness.run.runner import RunOptions, run_suite
from tests.agents.echo import TARGET_ENV

PLUGIN = '''
"""A test layer (labelled as such): every turn must be answered politely."""
from harness.layer import Layer
from harness.types import CheckSpec


def defaults(case, turn, context):
    return [CheckSpec("answered", True), CheckSpec("reply.not_regex", "(?i)stupid")]


def metrics(results, context):
    return {"echoed": sum(1 for r in results for t in r.observation.turns for _ in t.replies)}


def section(m):
    return f"<p id='manners'>echoed {int(m.get('echoed', 0))}</p>"


LAYER = Layer(name="manners", title="Manners (test layer)", order=50, default_checks=defaults,
              metrics=metrics, report_html=section)
'''


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """Install a package with a ``harness.layers`` entry point onto sys.path."""
    site = tmp_path / "site"
    (site / "manners_layer").mkdir(parents=True)
    (site / "manners_layer" / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    dist = site / "manners_layer-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: manners-layer\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[harness.layers]\nmanners = manners_layer:LAYER\n")
    monkeypatch.syspath_prepend(str(site))
    layer_registry.reload()
    yield
    sys.modules.pop("manners_layer", None)
    layer_registry.reload()


def _project(tmp_path: Path, body: str) -> Path:
    (tmp_path / "fixtures" / "manners").mkdir(parents=True)
    (tmp_path / "fixtures" / "manners" / "polite.yaml").write_text(textwrap.dedent(body))
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "echo"\ninprocess = "tests.agents.echo:make_app"\n'
                   '[sandbox]\nsettle_s = 0.2\nreply_timeout_s = 3\n' + TARGET_ENV)
    return cfg


async def test_a_fifth_layer_from_an_installed_package_runs(plugin, tmp_path):
    assert "manners" in layer_registry.names() and layer_registry.names()[:4] == [
        "robustness", "reasoning", "multiturn", "cost"]
    cfg = _project(tmp_path, """
        layer: manners
        cases:
          - id: polite-hello
            send: "hello"
            expect: {reply: {contains: "echo: hello"}}
          - id: rude-echo
            send: "you stupid bot"
            expect: {reply: {contains: "echo"}}
        """)
    config = load_config(cfg, environ={})
    cases = load_cases(tmp_path / "fixtures", layers=["manners"])
    report = await run_suite(config, cases, RunOptions(out_dir=tmp_path / "out"))
    by = {c.id: c for c in report.cases}
    assert by["polite-hello"].status == "pass"
    # the layer's default check caught what the case itself did not ask about
    assert by["rude-echo"].status == "fail"
    assert [e.check for e in by["rude-echo"].evidence if e.passed is False] == ["reply.not_regex"]
    assert {e.check for e in by["polite-hello"].evidence} >= {"answered", "reply.contains", "reply.not_regex"}
    written = write_all(report, tmp_path / "out" / report.run_id)
    results = json.loads(written["json"].read_text())
    assert results["layers"]["manners"]["planned"] == 2 and results["layers"]["manners"]["echoed"] == 2
    assert "<p id='manners'>echoed 2</p>" in written["html"].read_text()  # the layer's own report section


def test_an_unknown_layer_is_a_fixture_error_naming_the_known_ones(tmp_path):
    (tmp_path / "fixtures" / "manners").mkdir(parents=True)
    (tmp_path / "fixtures" / "robustness").mkdir(parents=True)
    (tmp_path / "fixtures" / "robustness" / "x.yaml").write_text(
        "layer: manners\ncases:\n  - id: a\n    send: hi\n    expect: {replies: {min: 1}}\n")
    with pytest.raises(FixtureErrors) as info:
        load_cases(tmp_path / "fixtures")
    assert "'manners' is not one of robustness, reasoning, multiturn, cost" in info.value.render()


def test_a_broken_plugin_is_reported_not_fatal(tmp_path, monkeypatch):
    site = tmp_path / "site"
    dist = site / "broken_layer-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-layer\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[harness.layers]\nbroken = no_such_module:LAYER\n")
    monkeypatch.syspath_prepend(str(site))
    layer_registry.reload()
    try:
        assert layer_registry.names() == ["robustness", "reasoning", "multiturn", "cost"]
        assert any("no_such_module" in p for p in layer_registry.problems())
    finally:
        layer_registry.reload()
