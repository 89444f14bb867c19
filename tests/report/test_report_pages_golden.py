"""report.html, calibration.html and judges.html look the same as before the templates: each is
rendered from a committed input (tests/report/fixtures/pages/*.json: three synthetic nights with
a regression, a flaky case, a changed reference, a baseline change, layer sections, slots,
repeats, a budget breach and ``<script>`` in replies, notes and ids) and compared, as the browser
sees it, with the page the f-string renderer drew from the same input before the change
(``*.dom.txt``: one token a line: tags with their attributes, and text with runs of whitespace
outside ``<pre>`` folded to one space; whitespace beside a block element dropped, as it does not
render). A difference means the page changed: look at it in a browser, then, if it is meant,
regenerate with ``UPDATE_PAGE_EXPECTATIONS=1`` and say why in the commit. The hand-run pixel
comparison before and after is in bench/RESULTS.md ("Templates"). A Chromium screenshot of the
rendered page must not be blank, and show the chart blue and the fail red.
"""

from __future__ import annotations

import html.parser
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.judges.report import render_html as judges_html
from harness.report.calibration_html import render_calibration_html
from harness.report.html import render_html

PAGES = Path(__file__).parent / "fixtures" / "pages"
BLOCK = {"html", "head", "body", "meta", "title", "style", "script", "header", "div", "p", "table", "tr", "td", "th",
         "ul", "li", "section", "h1", "h2", "h3", "details", "summary", "dl", "dt", "dd", "pre", "svg", "line", "text",
         "rect", "polyline", "circle"}
RAW = ("pre", "script", "style")


class _Tokens(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[list] = []
        self.raw = 0
        self.buf = ""

    def _flush(self) -> None:
        if self.buf:
            self.out.append(["text", self.buf if self.raw else re.sub(r"\s+", " ", self.buf)])
            self.buf = ""

    def handle_starttag(self, tag, attrs):
        self._flush()
        self.out.append(["start", tag, [list(a) for a in attrs]])
        self.raw += tag in RAW

    def handle_startendtag(self, tag, attrs):
        self._flush()
        self.out.append(["start", tag, [list(a) for a in attrs]])

    def handle_endtag(self, tag):
        self._flush()
        self.out.append(["end", tag])
        self.raw -= tag in RAW

    def handle_data(self, data):
        self.buf += data

    def handle_decl(self, decl):
        self._flush()
        self.out.append(["decl", decl])


def dom_tokens(page: str) -> list[list]:
    """The page as the browser lays it out: tags, attributes, text (see the module docstring)."""
    parser = _Tokens()
    parser.feed(page)
    parser._flush()
    out = parser.out
    kept = []
    for i, tok in enumerate(out):
        if tok[0] == "text" and i and out[i - 1][:2] == ["start", "style"]:  # CSS: layout is whitespace-free
            tok = ["text", re.sub(r"\s+", " ", tok[1]).strip()]
        if tok[0] == "text" and not tok[1].strip():
            near = [out[j] for j in (i - 1, i + 1) if 0 <= j < len(out)]
            if any(u[0] == "decl" or (u[0] in ("start", "end") and u[1] in BLOCK) for u in near):
                continue
        kept.append(tok)
    return kept


def _inputs(name: str):
    return json.loads((PAGES / f"{name}.json").read_text(encoding="utf-8"))


def page(name: str) -> str:
    if name == "report":
        f = _inputs("report")
        return render_html(f["results"], f["history"], f["diff"], base=f["base"], target_log=True)
    if name == "calibration":
        return render_calibration_html(_inputs("calibration"))
    return judges_html(_inputs("judges"))


@pytest.fixture(autouse=True)
def builtin_layers_only():
    """calibration.html has a column per registered layer: the built-in four."""
    from harness import layer as layer_registry

    layer_registry.reload()
    yield


@pytest.mark.parametrize("name", ["report", "calibration", "judges"])
def test_page_matches_the_page_drawn_before_the_templates(name):
    got = [json.dumps(t, ensure_ascii=False) for t in dom_tokens(page(name))]
    expected_file = PAGES / f"{name}.dom.txt"
    if os.environ.get("UPDATE_PAGE_EXPECTATIONS"):
        expected_file.write_text("\n".join(got) + "\n", encoding="utf-8")
    expected = expected_file.read_text(encoding="utf-8").splitlines()
    if got != expected:
        first = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
        pytest.fail(f"{name}.html differs from {expected_file.name} at token {first}: "
                    f"got {got[first:first + 3]}, expected {expected[first:first + 3]}")


@pytest.mark.parametrize("name", ["report", "calibration", "judges"])
def test_every_script_in_the_inputs_stays_text(name):
    text = page(name)
    assert "<script>alert" not in text and "<script>document" not in text
    assert text.count("<script") == (1 if name == "report" else 0)  # report.html's own filter script only
    assert "&lt;script&gt;" in text


def test_the_normaliser_sees_a_changed_page():
    """The comparison can fail: a word, an attribute, a tag or a space between inline elements."""
    base = '<p>a <b>b</b> c</p><div class="x">y</div>'
    assert dom_tokens(base) == dom_tokens('<p>a <b>b</b>\n   c</p>\n<div class="x">y</div>')
    for changed in ('<p>a <b>b</b> d</p><div class="x">y</div>', '<p>a <b>b</b> c</p><div class="z">y</div>',
                    '<p>a <i>b</i> c</p><div class="x">y</div>', '<p>a<b>b</b> c</p><div class="x">y</div>'):
        assert dom_tokens(changed) != dom_tokens(base), changed


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium on PATH: install Debian's package (apt-get install -y chromium)")


def test_report_screenshot_is_not_blank(tmp_path):
    from PIL import Image

    browser = _chromium()
    path = tmp_path / "report.html"
    path.write_text(page("report"), encoding="utf-8")
    shot = tmp_path / "report.png"
    proc = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           "--hide-scrollbars", "--force-device-scale-factor=1", f"--user-data-dir={tmp_path / 'p'}",
                           f"--screenshot={shot}", "--window-size=1280,2400", path.as_uri()],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert shot.is_file(), f"no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}"
    with Image.open(shot) as im:
        rgb = im.convert("RGB")
        colours = rgb.getcolors(maxcolors=1 << 20)
    assert colours and len(colours) > 50, "a blank or flat screenshot"
    present = {c for _, c in colours}
    assert (0x09, 0x69, 0xDA) in present  # the first chart series (the trends drew)
    assert (0xCF, 0x22, 0x2E) in present  # the fail badge


def test_a_wheel_carries_every_template():
    """Every file under harness/report/templates/ matches a package-data pattern in pyproject.toml."""
    import fnmatch
    import tomllib

    root = Path(__file__).resolve().parents[2]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["harness"]
    folder = root / "harness" / "report" / "templates"
    files = [p.relative_to(root / "harness").as_posix() for p in folder.rglob("*") if p.is_file()]
    assert len(files) >= 10
    # fnmatch's * crosses "/", setuptools' does not: compare segment counts too
    missing = [f for f in files if not any(fnmatch.fnmatch(f, pat) and f.count("/") == pat.count("/")
                                           for pat in patterns)]
    assert not missing, f"add a package-data pattern for {missing}"
