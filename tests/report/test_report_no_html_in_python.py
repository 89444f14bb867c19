"""No HTML is built in Python under harness/ and layers/: report.html, calibration.html and
judges.html come from the Jinja2 templates in harness/report/templates/ (autoescape on), so no
insertion can forget its escape. This scans every string literal (f-strings too; docstrings and
comments are prose and are skipped) for an HTML tag, so markup cannot drift back into code."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TAGS = ("html|head|body|meta|style|script|header|div|span|p|b|i|br|small|code|pre|mark|table|tr|td|th|"
        "section|ul|ol|li|details|summary|dl|dt|dd|h[1-6]|svg|line|rect|polyline|circle|label|input")
#: An opening tag with HTML attributes (``name``, ``name=value``) or a closing tag.
#: (Lower case, as every page writes them: ``HARNESS_<SECTION>_<KEY>`` is prose; a link needs its href.)
TAG = re.compile(rf"<(?:{TAGS})(?:\s+[\w:-]+(?:=(?:\"[^\"]*\"|'[^']*'|[^\s<>]+))?)*\s*/?>|</(?:{TAGS}|a)>|<a\s+href=")
#: Files that write markup that is not an HTML page, with the reason.
ALLOWED = {
    "harness/report/github.py": "GitHub-flavoured Markdown for a PR comment (its <details> folds are Markdown)",
}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def html_in(source: str) -> list[tuple[int, str]]:
    """(line, literal) of every string literal in ``source`` that holds an HTML tag."""
    tree = ast.parse(source)
    skip = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # an f-string: its literal parts joined, holes as {}
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            skip.update(id(v) for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
            text = node.value
        else:
            continue
        if TAG.search(text):
            found.append((node.lineno, text[:80]))
    return found


def python_files() -> list[Path]:
    files = [*(ROOT / "harness").rglob("*.py"), *(ROOT / "layers").rglob("*.py")]
    rel = [p.relative_to(ROOT) for p in files]  # harness/layers is a link to layers/: read once
    return sorted(ROOT / p for p in rel if "templates" not in p.parts and p.parts[:2] != ("harness", "layers"))


def test_no_python_file_under_harness_or_layers_builds_html():
    assert len(python_files()) > 50  # the scan sees the package
    offenders = {}
    for path in python_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED:
            continue
        hits = html_in(path.read_text(encoding="utf-8"))
        if hits:
            offenders[rel] = hits
    assert not offenders, f"HTML built in Python (move it to a template under harness/report/templates/): {offenders}"


@pytest.mark.parametrize("source", [
    'x = f"<td>{v}</td>"',
    "x = '<div class=\"muted\">'",
    "x = '</table>'",
    "x = '<br>' .join(parts)",
    "x = f'<a href=\"#{anchor}\">{name}</a>'",
    'x = f\'<section id="{a}"><h3>{t}</h3>\'',
    "x = '<svg role=\"img\" width=\"540\">'",
])
def test_the_scan_catches_markup(source):
    assert html_in(source)


@pytest.mark.parametrize("source", [
    '"""A docstring may say <div> and <td>."""',
    "x = 'Reply with JSON: <a number from 0 to 1, 1 meaning fully yes>'",
    "x = 'Summary of <title>: the claim'.lower() if False else 'a < b > c'",
    "# <td> in a comment\nx = 1",
    "x = 'x <= 3 and y >= 4'",
    "x = 'HARNESS_<SECTION>_<KEY>'",
])
def test_the_scan_lets_prose_pass(source):
    assert not html_in(source)
