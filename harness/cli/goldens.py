"""``harness golden accept RUN [--case GLOB]...``: draft golden answers from what a run observed,
the way snapshot tools write a snapshot (syrupy's ``--snapshot-update``, ``jest -u``) — except that
a golden is an *approved* answer, so a draft is written to ``golden/drafts/<case>.yaml`` with
``approved: pending`` and is used by no check until a person reads it, sets the date and moves it
to ``golden/<case>.yaml``. Also what ``harness check`` says about missing goldens.
"""

from __future__ import annotations

import fnmatch
import json
import os
from datetime import date
from pathlib import Path
from typing import Any, Iterable

import yaml

from harness.errors import FixtureError, UsageError
from harness.fileio import atomic_write_text

FORMAT = ("{case: <id>, answers: [{text: '...', author: human, approved: 2026-11-30}]} "
          "(1 to 3 answers; author human | model-drafted-approved; optional expires)")


def add_parsers(sub) -> None:
    g = sub.add_parser("golden", help="draft golden answers from a run's observed replies (for a person to approve)")
    gsub = g.add_subparsers(dest="golden_command", required=True)
    acc = gsub.add_parser("accept", help="write golden/drafts/<case>.yaml from RUN's replies: unapproved drafts "
                                         "a person reviews, dates and moves into golden/")
    acc.add_argument("run_id", help="a run id in the reports folder (or a run folder)")
    acc.add_argument("--case", action="append", default=[], metavar="GLOB", dest="cases",
                     help="only these cases (repeatable; globs); default: every case with a similarity check")
    acc.add_argument("--config", help="config file (default: ./harness.toml)")
    from harness.cli.options import add_reports_option

    add_reports_option(acc)
    acc.add_argument("--golden", default=None, help="golden folder (default: golden/ next to the config)")


def golden_ids(case: Any) -> list[str]:
    """The golden ids a case's similarity checks read (its own id unless ``golden:`` names another,
    plus the ``contrast:`` cases' goldens)."""
    out = []
    for turn in case.turns:
        for spec in turn.checks:
            if spec.name == "similarity":
                out.append(spec.params.get("golden") or case.id)
                out += list(spec.params.get("contrast") or ())
    return list(dict.fromkeys(out))


def missing_goldens(cases: Iterable[Any], goldens: Any, golden_dir: Path) -> list[FixtureError]:
    """One error per case whose similarity check reads a golden the folder does not have."""
    errors = []
    for case in cases:
        missing = [g for g in golden_ids(case) if goldens.get(g) is None]
        for gid in missing:
            errors.append(FixtureError(
                f"similarity reads golden {gid!r}, which {golden_dir / (gid + '.yaml')} does not hold: the check "
                "would be unavailable and the night incomplete", file=case.file, case=case.id,
                fix=f"write {golden_dir / (gid + '.yaml')} as {FORMAT}, or draft it from a run's reply: "
                    f"harness golden accept RUN_ID --case {gid}"))
    return errors


def cmd_golden(args) -> int:
    from harness.config import load_config

    config = load_config(args.config)
    reports = Path(args.out) if args.out else config.resolve("reports")
    golden_dir = Path(args.golden) if args.golden else config.golden_dir()
    run_dir = Path(args.run_id) if Path(args.run_id).is_dir() else reports / args.run_id
    path = run_dir / "results.json"
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", fix="harness golden accept RUN_ID names a finished run "
                                                            "of the reports folder (harness history lists them)") from None
    from harness.report.jsonread import results_problem

    problem = "it is not a JSON object" if not isinstance(results, dict) else results_problem(results)
    if problem:  # a draft from a run that was edited by hand would be no run's words
        raise UsageError(f"{path} is not as `harness run` wrote it: {problem}",
                         fix="restore the file, or draft from another run (harness history lists them)")
    cases = [c for c in results.get("cases") or () if isinstance(c, dict)]
    if args.cases:
        cases = [c for c in cases if any(fnmatch.fnmatchcase(str(c.get("id")), g) for g in args.cases)]
        if not cases:
            raise UsageError(f"no case of run {results.get('run_id')} matches {', '.join(args.cases)}",
                             fix="harness report RUN_DIR lists the run's cases")
    else:
        cases = [c for c in cases if any(e.get("check") == "similarity" for e in c.get("evidence") or ())]
    drafts = golden_dir / "drafts"
    written = 0
    for case in cases:
        text = _reply_of(case)
        if not text:
            print(f"skipped {case.get('id')}: no reply to draft from")
            continue
        drafts.mkdir(parents=True, exist_ok=True)
        out = drafts / f"{case['id']}.yaml"
        body = yaml.safe_dump({"case": case["id"], "answers": [
            {"text": text, "author": "model-drafted-approved", "approved": "pending"}]},
            sort_keys=False, allow_unicode=True, width=100)
        text = (f"# Drafted by `harness golden accept` from run {results.get('run_id')} on {date.today()}:\n"
                "# NOT APPROVED. Read it against the document; when it is right, set approved to\n"
                f"# today's date and move this file to {golden_dir / (case['id'] + '.yaml')}.\n"
                "# Until then no check uses it.\n" + body)
        if os.path.lexists(out) and not (out.is_file() and out.read_text(encoding="utf-8", errors="replace") == text):
            # a draft someone may be editing (or whatever is there) is kept: this one goes beside it
            out = next(drafts / f"{case['id']}.{results.get('run_id') or 'run'}{f'.{n}' if n else ''}.yaml"
                       for n in range(1000)
                       if not os.path.lexists(drafts / f"{case['id']}.{results.get('run_id') or 'run'}"
                                                       f"{f'.{n}' if n else ''}.yaml"))
        atomic_write_text(out, text)
        written += 1
        print(f"wrote {out} (unapproved draft)")
    print(f"{written} draft(s) in {drafts}: review each, set approved: <date>, move it up to {golden_dir}/")
    return 0


def _reply_of(case: dict) -> str:
    """The reply the case's similarity check judged (that turn's replies, joined), else its last reply."""
    turns = case.get("turns") or []
    turn = next((e.get("turn") for e in case.get("evidence") or () if e.get("check") == "similarity"), None)
    chosen = turns[turn] if isinstance(turn, int) and 0 <= turn < len(turns) else (turns[-1] if turns else {})
    return "\n\n".join(str(r.get("text") or "") for r in chosen.get("replies") or () if r.get("text")).strip()


HANDLERS = {"golden": cmd_golden}
