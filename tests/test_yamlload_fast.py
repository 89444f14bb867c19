"""The YAML loader's libyaml path (harness/schema/yamlload.py ``_FastLimits``): the same data and
lines as the pure parser for every file it reads, and every refusal still the pure parser's."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.schema import yamlload
from harness.schema.files import read_text

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*ROOT.glob("fixtures/*/*.yaml"), *ROOT.glob("bench/speed/fixtures/*/*.yaml"),
                *ROOT.glob("examples/*/fixtures/*/*.yaml")])

pytestmark = pytest.mark.skipif(yamlload._FastLimits is None, reason="PyYAML without libyaml: the pure parser only")


def _pure(text: str):
    loader = yamlload._Limits(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def _marks(value):
    """The data with every mapping's line and key lines, to compare both parsers' marks."""
    if isinstance(value, dict):
        return (getattr(value, "line", None), dict(getattr(value, "key_lines", {})),
                {k: _marks(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_marks(v) for v in value]
    return value


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_fast_path_reads_every_case_file_as_the_pure_parser_does(path):
    text = read_text(path)
    done, fast = yamlload._fast_loads(text)
    assert done, f"{path}: libyaml's path gave up on a file the suite runs"
    assert _marks(fast) == _marks(_pure(text))


TRICKY = """
a: &x {b: 1, c: [1, 2, "three"]}
d: *x
e: |
  block
   text
f: >-
  folded
  text
g: 0o17
h: 1_000
i: 2026-12-02
j: ~
k: !!str 12
"l:m": 'it''s'
? complex
: key
n: [a, {o: p}]
"""


def test_the_same_data_and_lines_for_anchors_blocks_tags_and_scalars():
    done, fast = yamlload._fast_loads(TRICKY)
    assert done and _marks(fast) == _marks(_pure(TRICKY))


@pytest.mark.parametrize("text, says", [
    ("a: [1\n", "YAML syntax error"),
    ("a: 1\na: 2\n", "written twice (lines 1 and 2)"),
    ("a: b: c\n", "YAML syntax error"),
    ("a: 1\n\x07b: 2\n", "character U+0007 is not allowed"),
    ("x: " + "[" * 70 + "]" * 70 + "\n", "nested more than 64 levels deep"),
    ("a: &a [*a]\n", "refers to the anchor it sits in"),
    ("a: &a [1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
     "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
     "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n", "alias bomb"),
    ("{1: 2}: x\n", "a key must be a plain value"),
])
def test_every_refusal_is_the_pure_parsers(text, says):
    assert yamlload._fast_loads(text) == (False, None)  # libyaml's path leaves it to the pure parser
    with pytest.raises(yamlload.YamlProblem) as fast:
        yamlload.loads(text)
    with pytest.raises(yamlload.YamlProblem) as pure:
        _pure_loads(text)
    assert says in str(fast.value) and str(fast.value) == str(pure.value)
    assert getattr(fast.value, "line", None) == getattr(pure.value, "line", None)


def _pure_loads(text: str):
    """``loads`` without the libyaml path (what it was before)."""
    saved = yamlload._FastLimits
    yamlload._FastLimits = None
    try:
        return yamlload.loads(text)
    finally:
        yamlload._FastLimits = saved


def test_a_valid_file_never_reaches_the_pure_parser(monkeypatch):
    text = read_text(ROOT / "bench" / "speed" / "fixtures" / "robustness" / "bench.yaml")

    def refuse(*_a, **_k):
        raise AssertionError("the pure parser ran")

    monkeypatch.setattr(yamlload, "_Limits", refuse)
    assert len(yamlload.loads(text)["cases"]) == 131
