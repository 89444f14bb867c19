"""report.html: self-contained, every case drillable, every untrusted string inert."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from html.parser import HTMLParser

import pytest

import base64
import hashlib

from harness.report.html import SCRIPT, SCRIPT_HASH, esc, render_html, write_html
from harness.report.jsonfile import report_to_dict

ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;"


class Tags(HTMLParser):
    """Collects start tags and the text of the page (what a reader sees)."""

    VOID = {"meta", "br", "link", "img", "input", "hr"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.starts: list[tuple[str, dict]] = []
        self.stack: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.starts.append((tag, dict(attrs)))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1:]}>"
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parsed(page: str) -> Tags:
    p = Tags()
    p.feed(page)
    p.close()
    assert p.stack == [], f"unclosed tags: {p.stack}"
    return p


def only_our_script(page: str) -> None:
    """The one script is the page's own filter (html.SCRIPT), allowed by its hash and nothing else."""
    assert page.lower().count("<script") == 1
    assert f"<script>{SCRIPT}</script>" in page
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    assert f"script-src '{SCRIPT_HASH}'" in csp and "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    digest = base64.b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
    assert SCRIPT_HASH == f"sha256-{digest}"


def test_untrusted_text_appears_as_text_never_as_markup(report, xss):
    page = render_html(report)
    only_our_script(page)
    # The reply, the state probe, a tag and a run note all carried the payload.
    assert page.count(ESCAPED) >= 4
    tags = parsed(page)
    assert [t for t, _ in tags.starts].count("script") == 1
    assert any(xss in chunk for chunk in tags.text)  # a reader sees the literal text


@pytest.mark.parametrize("field, value", [
    ("id", '"><img src=x onerror=alert(1)>'),
    ("error", "</details></body><script>x()</script>"),
    ("file", "' onmouseover='alert(1)"),
])
def test_hostile_case_fields_cannot_break_out(report, field, value):
    case = replace(report.cases[4], **{field: value})
    page = render_html(replace(report, cases=(case,)))
    tags = parsed(page)
    assert not [a for _, attrs in tags.starts for a in attrs if a.startswith("on")]
    assert {t for t, _ in tags.starts} <= {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2",
                                           "h3", "div", "span", "b", "table", "tr", "th", "td", "p", "details",
                                           "summary", "dl", "dt", "dd", "pre", "ul", "li", "a", "br", "section",
                                           "input", "label", "script"}
    only_our_script(page)
    assert any(value in chunk for chunk in tags.text)


def test_self_contained_no_external_resources_only_its_own_script(report):
    page = render_html(report)
    tags = parsed(page)
    for tag, attrs in tags.starts:
        assert tag not in ("link", "img", "iframe")
        assert "src" not in attrs
        if tag == "a":  # in-page anchors and the run folder's own files, nothing outside it
            assert attrs["href"].startswith("#") or attrs["href"] in ("results.json", "summary.md", "target.log")
    assert "<style>" in page and "default-src 'none'" in page
    only_our_script(page)


def test_every_case_is_a_details_drill_down_with_failures_open(report):
    tags = parsed(render_html(report))
    details = {attrs["id"]: attrs for tag, attrs in tags.starts if tag == "details"}
    assert set(details) == {f"case-{c.id}" for c in report.cases}
    assert "open" in details["case-url-malformed-scheme"] and "open" in details["case-cancel-mid-task"]
    assert "open" not in details["case-url-ok"]
    # The "what broke" list links to each severe case.
    links = [a["href"] for t, a in tags.starts if t == "a" and a["href"].startswith("#")]
    assert links == ["#case-url-malformed-scheme", "#case-cancel-mid-task"]


def test_header_layer_table_evidence_and_transcript(report):
    page = render_html(report)
    text = " ".join(parsed(page).text)
    assert "run 20240101-020000-abcd" in text and "docbot 1.2" in text
    assert "n/a" in text  # the cost layer had nothing decidable
    assert "no match for (?i)invalid.*url" in text and "fetch_document was called" in text
    assert "user →" in text and "summarize {docs}/a.pdf" in text
    assert "agent ←" in text and "sendMessage" in text and "+820ms" in text
    assert "[OK]" in text  # reply buttons
    assert "telegram.sendMessage" in text and "llm" in text
    assert "state after turn" in text
    assert "test-double" in text  # the soft case's evidence source is labelled
    assert "critic backend down" in text


def test_renders_from_dict_and_writes(report, tmp_path):
    assert render_html(report_to_dict(report)) == render_html(report)
    path = write_html(report, tmp_path / "report.html")
    assert path.read_text(encoding="utf-8") == render_html(report)


def test_cases_are_grouped_by_layer_most_severe_first(report):
    page = render_html(report)
    groups = re.findall(r'<section class="layer-cases" data-layer="(\w+)">(.*?)</section>', page, re.S)
    by_layer = {layer: re.findall(r'<details class="case \w+" id="case-([a-z-]+)" data-status="(\w+)"', body)
                for layer, body in groups}
    assert set(by_layer) == {c.layer for c in report.cases}
    for layer, found in by_layer.items():
        assert {i for i, _ in found} == {c.id for c in report.cases if c.layer == layer}
        ranks = [["fail", "error", "unavailable", "soft", "skipped", "pass"].index(st) for _, st in found]
        assert ranks == sorted(ranks), (layer, found)


@pytest.mark.parametrize("raw, out", [
    ("<a href='x'>", "&lt;a href=&#x27;x&#x27;&gt;"),
    ('"q" & r', "&quot;q&quot; &amp; r"),
    (None, ""),
    (12, "12"),
])
def test_esc(raw, out):
    assert esc(raw) == out


@pytest.mark.skipif(not (shutil.which("chromium") or shutil.which("chromium-browser")),
                    reason="headless chromium is not installed")
def test_real_browser_shows_the_payload_as_text(report, tmp_path, xss):
    path = write_html(report, tmp_path / "report.html")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    dom = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", path.as_uri()],
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert dom.lower().count("<script") == 1 and ESCAPED in dom
