"""report.html: self-contained, every case drillable, every untrusted string inert."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import replace
from html.parser import HTMLParser

import pytest

from harness.report.html import esc, render_html, write_html
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


def test_untrusted_text_appears_as_text_never_as_markup(report, xss):
    page = render_html(report)
    assert "<script" not in page.lower()
    # The reply, the state probe, a tag and a run note all carried the payload.
    assert page.count(ESCAPED) >= 4
    tags = parsed(page)
    assert "script" not in {t for t, _ in tags.starts}
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
                                           "summary", "dl", "dt", "dd", "pre", "ul", "li", "a", "br", "section"}
    assert any(value in chunk for chunk in tags.text)


def test_self_contained_no_external_resources_no_script(report):
    page = render_html(report)
    tags = parsed(page)
    for tag, attrs in tags.starts:
        assert tag not in ("script", "link", "img", "iframe")
        assert "src" not in attrs
        if tag == "a":
            assert attrs["href"].startswith("#")
    assert "<style>" in page and "default-src 'none'" in page


def test_every_case_is_a_details_drill_down_with_failures_open(report):
    tags = parsed(render_html(report))
    details = {attrs["id"]: attrs for tag, attrs in tags.starts if tag == "details"}
    assert set(details) == {f"case-{c.id}" for c in report.cases}
    assert "open" in details["case-url-malformed-scheme"] and "open" in details["case-cancel-mid-task"]
    assert "open" not in details["case-url-ok"]
    # The "what broke" list links to each severe case.
    links = [a["href"] for t, a in tags.starts if t == "a"]
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


def test_cases_are_listed_most_severe_first(report):
    ids = re.findall(r'<details class="case \w+" id="case-([a-z-]+)"', render_html(report))
    assert ids[:2] == ["url-malformed-scheme", "cancel-mid-task"] and ids[-1] == "url-ok"


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
    assert "<script>" not in dom and ESCAPED in dom
