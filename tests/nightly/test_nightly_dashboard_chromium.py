"""report.html in a real browser: Debian's headless Chromium renders the dashboard of two
nights (the second with a regression), a screenshot is taken and checked, and the DOM shows
the charts and an agent reply with ``<script>`` as text, never as a script (the page's one
script is its own filter, allowed by hash: tests/report/test_report_html_browser.py).

Chromium is installed by scripts/test when missing (root + apt); without it this test skips
and says why.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.night.context import nights_around
from harness.report import render


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SIZE = (1280, 2000)
#: The first chart series colour (html_trends.PALETTE[0], #0969da).
CHART_BLUE = (0x09, 0x69, 0xDA)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no headless Chromium on PATH: install Debian's package (apt-get install -y chromium); "
                "scripts/test does so when run as root with apt")


def browse(tmp_path: Path, page: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [chromium(), *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *extra, page.resolve().as_uri()]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=tmp_path)


def read_png(path: Path):
    """Width, height and RGB pixels of a PNG (Pillow, a dev dependency), after checking its signature."""
    from PIL import Image

    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    with Image.open(path) as im:
        assert im.format == "PNG"
        rgb = im.convert("RGB")
        return rgb.width, rgb.height, rgb


XSS = "<script>document.title='pwned';alert(1)</script>"


@pytest.fixture
def dashboard(tmp_path, make_case, make_run, save_run) -> Path:
    """Two nights in a reports folder; the second has a regression and an XSS reply."""
    case, run, write_run = make_case, make_run, save_run
    reports = tmp_path / "reports"
    night1 = [case("url-ok", latency=800.0, cost=0.002, similarity=0.91),
              case("cmd-help", latency=120.0, cost=0.0),
              case("summary-faithful", layer="reasoning", latency=2400.0, cost=0.004, similarity=0.88)]
    night2 = [case("url-ok", "fail", latency=1900.0, cost=0.003, reply=f"Summary {XSS}", similarity=0.62),
              case("cmd-help", latency=130.0, cost=0.0),
              case("summary-faithful", "soft", layer="reasoning", latency=2600.0, cost=0.004, similarity=0.74)]
    write_run(reports, run("20240101-020000-aaaa", night1))
    second = write_run(reports, run("20240102-020000-bbbb", night2))
    return render(second, "html", context=nights_around)


def test_screenshot_shows_the_charts_and_is_not_blank(tmp_path, dashboard):
    html = dashboard.read_text(encoding="utf-8")
    assert html.count("<svg") == 4 and "Tonight vs 20240101-020000-aaaa" in html
    shot = tmp_path / "report.png"
    proc = browse(tmp_path, dashboard, f"--screenshot={shot}", f"--window-size={SIZE[0]},{SIZE[1]}")
    assert shot.is_file(), f"no screenshot (exit {proc.returncode}): {proc.stderr[-2000:]}"
    width, height, image = read_png(shot)
    assert (width, height) == SIZE
    from PIL import ImageStat

    variance = ImageStat.Stat(image.convert("L")).var[0]
    assert variance > 100, f"screenshot looks blank (variance {variance:.1f})"
    import numpy as np

    pixels = np.asarray(image, dtype=np.int16)
    blue = int((np.abs(pixels - np.array(CHART_BLUE, dtype=np.int16)) < 24).all(axis=2).sum())
    assert blue > 300, f"chart lines not visible in the screenshot ({blue} chart-blue pixels)"


def test_dom_has_charts_and_shows_script_as_text(tmp_path, dashboard):
    proc = browse(tmp_path, dashboard, "--dump-dom", "--virtual-time-budget=2000")
    dom = proc.stdout
    assert "</html>" in dom, f"no DOM dumped (exit {proc.returncode}): {proc.stderr[-2000:]}"
    assert len(re.findall(r"<svg\b", dom)) == 4
    assert len(re.findall(r"<polyline\b", dom)) >= 3  # pass rate, cost and latency lines over two nights
    # The reply is on the page as text: escaped in the serialized DOM; the one script element is
    # the page's own filter (report/html.py SCRIPT), and the payload never ran.
    assert "Summary &lt;script&gt;document.title='pwned';alert(1)&lt;/script&gt;" in dom
    assert len(re.findall(r"<script\b", dom, re.I)) == 1
    title = re.search(r"<title>(.*?)</title>", dom, re.S).group(1)
    assert "20240102-020000-bbbb" in title and "pwned" not in title


@pytest.fixture
def changed_page(tmp_path, make_case, make_run, save_run, monkeypatch) -> Path:
    """An accepted night, then a night whose reply changed a number and carries a script."""
    from harness.night.baseline import accept_baseline
    from harness.night.history import LocalRunSource

    reports = tmp_path / "reports"
    save_run(reports, make_run("20240101-020000-aaaa", [make_case("url-ok", reply="Rates rose 15% last year.")]))
    changed = make_case("url-ok", "fail", reply=f"Rates rose 20% last year. {XSS}")
    changed["evidence"].append({"check": "baseline.facts", "turn": 0, "availability": "ready", "passed": False,
                                "score": 0.0, "expected": "15%", "observed": "20%",
                                "reason": "a number changed: 15% -> 20%", "evaluator": "baseline@1",
                                "source": "real"})
    second = save_run(reports, make_run("20240102-020000-bbbb", [changed]))
    monkeypatch.setenv("USER", "tester")
    accept_baseline(reports, LocalRunSource(reports), "20240101-020000-aaaa")
    return render(second, "html", context=nights_around)


def test_dom_shows_the_change_beside_the_baseline_and_the_script_as_text(tmp_path, changed_page):
    proc = browse(tmp_path, changed_page, "--dump-dom", "--virtual-time-budget=2000")
    dom = proc.stdout
    assert "</html>" in dom, f"no DOM dumped (exit {proc.returncode}): {proc.stderr[-2000:]}"
    section = dom[dom.index('id="changes"'):]
    section = section[:section.index("</section>")]
    assert "1 case: a number changed" in section
    assert re.findall(r"<mark>([^<]*)</mark>", section) == ["15%", "20%"]  # accepted left, tonight right
    assert "&lt;script&gt;document.title='pwned';alert(1)&lt;/script&gt;" in section
    assert len(re.findall(r"<script\b", dom, re.I)) == 1  # the page's own filter only
    title = re.search(r"<title>(.*?)</title>", dom, re.S).group(1)
    assert "pwned" not in title
