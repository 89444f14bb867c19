"""The report writers: results.json, junit.xml, summary.md, report.html (+ terminal output).

Every writer renders from one dict, the results.json form (``report_to_dict``), so a
finished run can be re-rendered in any format from its results.json alone
(``harness report RUN_DIR --format ...``). The results.jsonl journal is not written here:
the runner appends to it as cases finish (``Journal``), and ``write_all`` never touches it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from harness import redact
from harness.errors import UsageError
from harness.fileio import atomic_write_text

if TYPE_CHECKING:
    from harness.types import RunReport

#: Where each name of the package's interface is (``__getattr__`` imports it on first use): a run
#: imports ``harness.report.journal`` at its start and the writers (jinja2, the templates) only
#: once it writes its reports; ``prewarm`` loads them while the run waits out its last window.
_LAZY = {
    "render_github": "github", "render_html": "html", "write_html": "html", "Journal": "journal",
    "read_journal": "journal", "case_to_dict": "jsonfile", "dumps": "jsonfile", "report_to_dict": "jsonfile",
    "write_json": "jsonfile", "case_from_dict": "jsonread", "load_report": "jsonread",
    "report_from_dict": "jsonread", "render_junit": "junit", "write_junit": "junit",
    "render_summary": "markdown", "write_summary": "markdown",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"harness.report.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _renderer(module: str, name: str) -> Callable[[Mapping[str, Any]], str]:
    def render_one(report_dict: Mapping[str, Any]) -> str:
        import importlib

        return getattr(importlib.import_module(f"harness.report.{module}"), name)(report_dict)

    render_one.__name__ = render_one.__qualname__ = name
    return render_one


#: ``--format`` name -> (file name in the run directory, renderer from the dict form).
FORMATS: dict[str, tuple[str, Callable[[Mapping[str, Any]], str]]] = {
    "json": ("results.json", _renderer("jsonfile", "dumps")),
    "junit": ("junit.xml", _renderer("junit", "render_junit")),
    "md": ("summary.md", _renderer("markdown", "render_summary")),
    "html": ("report.html", _renderer("html", "render_html")),
    "github": ("summary-github.md", _renderer("github", "render_github")),  # a PR comment / $GITHUB_STEP_SUMMARY (report/github.py)
}

__all__ = [
    "FORMATS", "Journal", "case_from_dict", "case_to_dict", "load_report", "read_journal",
    "prewarm", "render", "render_html", "render_junit", "render_summary", "render_text", "report_from_dict",
    "report_to_dict", "write_all", "write_html", "write_json", "write_junit", "write_summary",
]


def prewarm() -> None:
    """Import the writers and compile the run's page templates now (a run calls it in a worker
    thread while it waits out its last quiet window, ``Runner``): ``write_all`` then only
    renders. Importing and compiling report.html's templates is 0.1-0.3 s of CPU, the most of
    it in the first ``render_html``."""
    from harness.report import github, html, jsonfile, jsonread, junit, markdown  # noqa: F401
    from harness.report.templating import env

    environment = env()
    for name in environment.list_templates(extensions=("j2",)):
        if not name.startswith(("calibration", "judges")):  # pages of other commands
            environment.get_template(name)


def write_all(report: RunReport | Mapping[str, Any], run_dir: str | os.PathLike[str], *,
              history: list[Mapping[str, Any]] | None = None,
              diff: Mapping[str, Any] | None = None, base: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """Write every report file into ``run_dir``; returns ``{format: path}``.

    ``history`` (run records for report.html's trend charts), ``diff`` (tonight against
    the baseline; also written as diff.json) and ``base`` (the results dict it compared with:
    the accepted replies report.html and summary.md put beside tonight's) come from
    ``harness.night.context.run_context``.
    results.json is written last, so its presence means the other files are complete too.
    """
    from harness.report.jsonfile import dumps, report_to_dict
    from harness.types import RunReport

    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    d = report_to_dict(report) if isinstance(report, RunReport) else dict(report)
    d = redact.active().data(d)  # before rendering: Markdown's escaping would split a secret
    written: dict[str, Path] = {}
    if diff is not None:
        written["diff"] = _save(run_dir / "diff.json", dumps(diff))
    for fmt in ("junit", "md", "html", "json"):
        written[fmt] = _write(d, run_dir, fmt, history=history, diff=diff, base=base)
    return written


def render_text(report_dict: Mapping[str, Any], fmt: str) -> str:
    """One format's text from the results.json dict."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown report format {fmt!r}", fix=f"use one of: {', '.join(FORMATS)}")
    return FORMATS[fmt][1](report_dict)


#: ``(results dict, reports folder) -> (history, diff[, base])``: the nights around a run, for
#: the html, md and github forms (``harness.night.context.nights_around``; the report never reads
#: them itself). ``base`` (optional third item): the results dict the diff compared with.
Context = Callable[[Mapping[str, Any], Path], "tuple[Any, ...]"]


def render(run_dir: str | os.PathLike[str], fmt: str, *, context: Context | None = None) -> Path:
    """Re-render one format of a finished run from its results.json; returns the file.

    For ``json`` the file is only validated (it is the source). Raises ``UsageError`` for
    an unknown format or a run directory without a readable results.json.
    """
    if fmt not in FORMATS:
        raise UsageError(f"unknown report format {fmt!r}", fix=f"use one of: {', '.join(FORMATS)}")
    run_dir = Path(run_dir)
    if run_dir.is_file():  # results.json itself was named
        run_dir = run_dir.parent
    from harness.report.jsonread import load_report

    d = redact.active().data(load_report(run_dir))
    if fmt == "json":
        return run_dir / "results.json"
    extra: dict[str, Any] = {}
    if fmt in ("html", "md", "github") and context is not None:  # the nights around it: the run folder's siblings
        nights = tuple(context(d, run_dir.parent))
        history, diff = nights[0], nights[1]
        extra = {"history": history, "diff": diff, "base": nights[2] if len(nights) > 2 else None}
    return _write(d, run_dir, fmt, **extra)


def _write(d: Mapping[str, Any], run_dir: Path, fmt: str, history=None, diff=None, base=None) -> Path:
    from harness.report.github import render_github
    from harness.report.html import render_html
    from harness.report.markdown import render_summary

    if fmt == "html":
        text = render_html(d, history, diff, target_log=(run_dir / "target.log").is_file(), base=base)
    elif fmt == "md":
        text = render_summary(d, diff, base=base)
    elif fmt == "github":
        text = render_github(d, diff, history, base=base)
    else:
        text = render_text(d, fmt)
    return _save(run_dir / FORMATS[fmt][0], text)


def _save(path: Path, text: str) -> Path:
    """The one write point of the report files: redacted (harness.redact), then written atomically."""
    return atomic_write_text(path, redact.active().text(text))
