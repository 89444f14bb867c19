"""Golden answers: loading, validation and the suite's golden version.

    golden/VERSION            one line, e.g. ``2026.11.30-1``: recorded in every run
    golden/<case-id>.yaml     {case: <id>, answers: [{text, author, approved, expires?}]}
    golden/critic/*.yaml      the judge-health set (harness.models.critic_health reads it)

Every file is validated up front; every problem is reported at once as a fixture error
(exit 2) naming the file and the fix. An expired answer is kept out of scoring and
reported, never silently used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

from harness.errors import FixtureError, FixtureErrors
from harness.schema.files import InputProblem
from harness.schema.yamlload import load_file as load_yaml, strip_lines
from harness.types import CASE_ID_RE

AUTHORS = ("human", "model-drafted-approved")
ANSWER_KEYS = {"text", "author", "approved", "expires"}
MAX_ANSWERS = 3


@dataclass(frozen=True)
class GoldenAnswer:
    """One approved reference answer."""

    text: str
    author: str
    """human | model-drafted-approved."""
    approved: date
    expires: date | None = None
    """After this day the answer is not used (and the run says so)."""

    def expired(self, today: date) -> bool:
        return self.expires is not None and today > self.expires


@dataclass(frozen=True)
class Golden:
    """A case's golden file."""

    case: str
    answers: tuple[GoldenAnswer, ...]
    file: str = ""


@dataclass
class GoldenSet:
    """Every golden of the suite, plus its version."""

    version: str = "none"
    by_case: dict[str, Golden] = field(default_factory=dict)
    directory: Path | None = None
    expired_used: set[str] = field(default_factory=set)
    """Golden ids a case asked for whose answers had all expired (reported as a run note)."""
    missing_used: set[str] = field(default_factory=set)

    def get(self, golden_id: str) -> Golden | None:
        return self.by_case.get(golden_id)

    def report_notes(self) -> list[str]:
        notes = []
        if self.expired_used:
            notes.append(f"expired golden answers were not used ({len(self.expired_used)}): "
                         + ", ".join(sorted(self.expired_used)) + "; re-approve them or set a new expires date")
        if self.missing_used:
            notes.append(f"cases without a golden answer ({len(self.missing_used)}): "
                         + ", ".join(sorted(self.missing_used)) + "; their similarity evidence is unavailable")
        return notes

    def report_models(self) -> dict[str, Any]:
        return {}


def _date(value: Any, what: str) -> date:
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value)
        except ValueError:
            pass
    raise ValueError(f"{what} must be a date written YYYY-MM-DD, got {value!r}")


def _answer(raw: Any, index: int) -> GoldenAnswer:
    if not isinstance(raw, dict):
        raise ValueError(f"answers[{index}] must be a table {{text, author, approved}}")
    unknown = set(raw) - ANSWER_KEYS
    if unknown:
        raise ValueError(f"answers[{index}] has unknown key(s) {sorted(unknown)} (known: {', '.join(sorted(ANSWER_KEYS))})")
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"answers[{index}].text must be a non-empty string")
    author = raw.get("author")
    if author not in AUTHORS:
        raise ValueError(f"answers[{index}].author must be one of {', '.join(AUTHORS)}, got {author!r}")
    if "approved" not in raw:
        raise ValueError(f"answers[{index}] lacks approved: the date a person approved it")
    approved = _date(raw["approved"], f"answers[{index}].approved")
    expires = _date(raw["expires"], f"answers[{index}].expires") if raw.get("expires") is not None else None
    if expires is not None and expires < approved:
        raise ValueError(f"answers[{index}].expires {expires} is before approved {approved}")
    return GoldenAnswer(text=text.strip(), author=author, approved=approved, expires=expires)


def load_golden_file(path: Path) -> Golden:
    """One ``golden/<case-id>.yaml``; raises FixtureError naming the file and the fix."""
    file = str(path)
    fix = ("write {case: <id>, answers: [{text: '...', author: human, approved: 2026-11-30}]} "
           "(1 to 3 answers; author human | model-drafted-approved; optional expires)")
    try:  # the case files' loader: UTF-8, no folder or link loop, no duplicate key, no alias bomb
        data = strip_lines(load_yaml(path))
    except InputProblem as exc:
        raise FixtureError(f"golden file: {exc.message}", file=file, line=exc.line, fix=exc.fix) from None
    if not isinstance(data, dict):
        raise FixtureError("a golden file must be a table", file=file, fix=fix)
    unknown = set(data) - {"case", "answers"}
    if unknown:
        raise FixtureError(f"unknown key(s) {sorted(unknown)}", file=file, fix=fix)
    case = data.get("case")
    if not isinstance(case, str) or not CASE_ID_RE.match(case):
        raise FixtureError(f"case {case!r} must be a case id", file=file, fix=fix)
    if case != path.stem:
        raise FixtureError(f"case {case!r} does not match the file name {path.name!r}", file=file,
                           fix=f"rename the file to {case}.yaml or correct case:")
    answers = data.get("answers")
    if not isinstance(answers, list) or not 1 <= len(answers) <= MAX_ANSWERS:
        raise FixtureError(f"answers must be a list of 1 to {MAX_ANSWERS} answers", file=file, fix=fix)
    try:
        parsed = tuple(_answer(a, i) for i, a in enumerate(answers))
    except ValueError as exc:
        raise FixtureError(str(exc), file=file, fix=fix) from None
    return Golden(case=case, answers=parsed, file=file)


def load_goldens(directory: str | Path | None) -> GoldenSet:
    """Every golden under ``directory`` (no folder: an empty set, version ``none``).

    Raises FixtureErrors listing every bad file.
    """
    if directory is None:
        return GoldenSet()
    root = Path(directory)
    if not root.is_dir():
        return GoldenSet(directory=root)
    errors: list[FixtureError] = []
    version = "none"
    vfile = root / "VERSION"
    if vfile.exists():
        lines = [ln.strip() for ln in vfile.read_text(encoding="utf-8").splitlines() if ln.strip()]
        if len(lines) != 1 or not re.fullmatch(r"[A-Za-z0-9._-]+", lines[0]):
            errors.append(FixtureError("VERSION must hold a single line such as 2026.11.30-1", file=str(vfile),
                                       fix="write one version string, bumped whenever a golden changes"))
        else:
            version = lines[0]
    goldens: dict[str, Golden] = {}
    for path in sorted(root.glob("*.y*ml")):
        try:
            g = load_golden_file(path)
        except FixtureError as exc:
            errors.append(exc)
            continue
        if g.case in goldens:
            errors.append(FixtureError(f"a second golden for case {g.case!r}", file=str(path),
                                       fix=f"merge it into {goldens[g.case].file}"))
            continue
        goldens[g.case] = g
    if errors:
        raise FixtureErrors(errors)
    return GoldenSet(version=version, by_case=goldens, directory=root)
