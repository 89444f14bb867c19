"""report.html in headless Chromium (issue 16): the first screen says what happened in one
sentence, at phone (390 px) and desktop (1400 px) widths; the status filter and the search
work in the browser (the page's one script runs under its own CSP); no "None" anywhere.

Skips, saying why, when Chromium is missing (scripts/test installs it as root with apt).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from harness.night.context import nights_around
from harness.report import render
from tests.nightly.conftest import case, run, write_run
from tests.nightly.test_nightly_dashboard_chromium import FLAGS, browse, chromium, read_png


@pytest.fixture
def page(tmp_path) -> Path:
    """Two nights; the second has a failure, an error, a button press and unknown (null) fields."""
    reports = tmp_path / "reports"
    night1 = [case(f"url-{i}") for i in range(4)] + [case("book-visit", layer="multiturn"),
                                                     case("cost-small", layer="cost")]
    night2 = [case("url-0", "fail", reply="needle-in-the-reply"), case("url-1"), case("url-2", "error"),
              case("url-3"), case("book-visit", layer="multiturn"), case("cost-small", layer="cost", cost=None)]
    night2[4]["turns"][0]["pressed"] = "📅 Book an appointment"
    night2[4]["turns"][0]["sent"] = None
    for c in night2:
        c.update({"pass_at_k": None, "pass_hat_k": None, "passes": None})
    pizzabot = {"name": "pizzabot", "version": "unknown"}  # the version is not known: the header says none
    write_run(reports, run("20261127-020000-aaaa", night1, started_at="2026-11-27T02:00:00+00:00", target=pizzabot,
                           golden_version=None))
    tonight = write_run(reports, run("20261128-020000-bbbb", night2, started_at="2026-11-28T02:00:00+00:00",
                                     target=pizzabot, golden_version=None))
    (tonight / "target.log").write_text("Traceback: the bot's own output\n")
    return render(tonight, "html", context=nights_around)


def _dom(tmp_path: Path, page: Path, fragment: str = "") -> str:
    """The DOM after the page's script ran; ``fragment`` presets the filter (``#status=..&q=..``)."""
    proc = subprocess.run([chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                           "--virtual-time-budget=3000", page.resolve().as_uri() + fragment],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert "</html>" in proc.stdout, f"no DOM (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return proc.stdout


def _visible(dom: str) -> set[str]:
    """Case ids whose <details> is not hidden after the page's script ran."""
    out = set()
    for attrs in re.findall(r"<details ([^>]*)>", dom):
        if 'class="case' in attrs and "hidden" not in attrs:
            out.add(re.search(r'id="case-([^"]+)"', attrs).group(1))
    return out


def test_the_first_screen_is_one_sentence_at_phone_and_desktop_width(tmp_path, page):
    html = page.read_text(encoding="utf-8")
    sentence = "4 of 6 passed (1 failed, 1 errored); 2 regressions since 27 Nov"
    assert f'<p class="sentence" id="sentence">{sentence}</p>' in html
    # header: the name without "unknown"; the sentence straight under it, before regressions and trends
    assert "<h1>" in html and "pizzabot</h1>" in html and "unknown" not in html
    assert html.index('id="sentence"') < html.index('id="diff"') < html.index('id="trends"') < html.index('id="cases"')
    for width in (390, 1400):
        shot = tmp_path / f"report-{width}.png"
        proc = browse(tmp_path, page, f"--screenshot={shot}", f"--window-size={width},900", "--hide-scrollbars")
        assert shot.is_file(), f"no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}"
        w, h, image = read_png(shot)
        assert (w, h) == (width, 900)
        from PIL import ImageStat

        assert ImageStat.Stat(image.convert("L")).var[0] > 50, f"blank screenshot at {width}px"


def test_filter_and_search_work_in_the_browser(tmp_path, page):
    everything = {"url-0", "url-1", "url-2", "url-3", "book-visit", "cost-small"}
    dom = _dom(tmp_path, page)
    assert re.search(r'<div class="filters" id="filters">', dom), "the script did not run (CSP?)"
    assert _visible(dom) == everything
    assert _visible(_dom(tmp_path, page, "#status=fail,error")) == {"url-0", "url-2"}
    assert _visible(_dom(tmp_path, page, "#q=needle-in-the")) == {"url-0"}
    assert _visible(_dom(tmp_path, page, "#q=book%20an%20appointment")) == {"book-visit"}  # a press's label
    dom = _dom(tmp_path, page, "#status=pass&q=url-")
    assert _visible(dom) == {"url-1", "url-3"}
    assert re.search(r'<section class="layer-cases" data-layer="cost" hidden', dom)  # an empty group folds away


def test_no_none_anywhere_and_presses_look_like_presses(tmp_path, page):
    dom = _dom(tmp_path, page)
    text = re.sub(r"<script>.*?</script>", "", re.sub(r"<style>.*?</style>", "", dom, flags=re.S), flags=re.S)
    text = re.sub(r"<[^>]+>", " ", text)
    assert not re.search(r"\bNone\b", text)
    assert "user pressed a button" in text and "📅 Book an appointment" in text
    assert '<a href="target.log">target.log</a>' in dom
