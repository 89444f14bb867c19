"""Quarantine: known-flaky cases that still run and are reported but do not turn the night red.

``fixtures/quarantine.yaml``::

    quarantine:
      - id: url-bare-domain          # a case id
        reason: "flips on slow CI machines, see issue 12"
        owner: alice
        expires: 2025-07-01          # optional: after this date the case counts again

A quarantined case keeps its real status in every report (marked "quarantined"); only the
run's verdict and exit code ignore it (``aggregate.count``). An expired entry is ignored
and named in the run's notes, so a quarantine cannot be forgotten. A malformed file is a
fixture error (exit 2, nothing runs).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.errors import FixtureError, FixtureErrors
from harness.schema.files import InputProblem
from harness.schema.yamlload import load_file as load_yaml, strip_lines
from harness.types import CASE_ID_RE

FILE = "quarantine.yaml"
KEYS = {"id", "reason", "owner", "expires"}


@dataclass(frozen=True)
class QuarantineEntry:
    """One quarantined case."""

    id: str
    """The case id."""
    reason: str
    """Why it is quarantined (shown in reports)."""
    owner: str
    """Who is on the hook to fix it."""
    expires: date | None = None
    """Last day the quarantine holds; None: until removed."""

    def active(self, today: date | None = None) -> bool:
        today = today or datetime.now(timezone.utc).date()
        return self.expires is None or today <= self.expires


def load_quarantine(path: str | Path) -> list[QuarantineEntry]:
    """Read and validate the quarantine file; a missing file means no quarantine."""
    path = Path(path)
    if not path.is_file():
        return []
    file = str(path)
    try:  # the case files' loader: UTF-8, no duplicate key, no alias bomb (harness/schema/yamlload.py)
        raw = load_yaml(path)
        data = strip_lines(raw)
    except InputProblem as exc:
        raise FixtureError(exc.message, file=file, line=exc.line, fix=exc.fix) from None
    if data is None:
        return []
    if not isinstance(data, dict) or set(data) != {"quarantine"} or not isinstance(data["quarantine"], list):
        raise FixtureError("the file must hold one key, `quarantine:`, with a list of entries", file=file,
                           fix="quarantine:\n    - {id: case-id, reason: why, owner: who, expires: 2025-12-31}")
    errors: list[FixtureError] = []
    entries: list[QuarantineEntry] = []
    seen: set[str] = set()
    for i, item in enumerate(data["quarantine"]):
        where = f"entry {i + 1}"
        line = getattr(raw["quarantine"][i], "line", None)  # the entry's line (a table's, from the loader)
        if not isinstance(item, dict):
            errors.append(FixtureError(f"{where} must be a mapping with id, reason, owner", file=file, line=line))
            continue
        unknown = set(item) - KEYS
        if unknown:
            errors.append(FixtureError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}", file=file,
                                       line=line, fix=f"keys: {', '.join(sorted(KEYS))}"))
        cid = item.get("id")
        if not isinstance(cid, str) or not CASE_ID_RE.match(cid):
            errors.append(FixtureError(f"{where}: id must be a case id ([a-z0-9-]+), got {cid!r}", file=file,
                                       line=line))
            continue
        if cid in seen:
            errors.append(FixtureError(f"{where}: {cid} is listed twice", file=file, case=cid, line=line))
        seen.add(cid)
        for key in ("reason", "owner"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                errors.append(FixtureError(f"{where}: {key} is required (a non-empty string)", file=file, case=cid,
                                           line=line, fix="every quarantine names why and who will fix it"))
        expires = item.get("expires")
        if isinstance(expires, datetime):
            expires = expires.date()
        elif isinstance(expires, str):
            try:
                expires = date.fromisoformat(expires)
            except ValueError:
                errors.append(FixtureError(f"{where}: expires {expires!r} is not a date (YYYY-MM-DD)", file=file,
                                           line=line, case=cid))
                continue
        elif expires is not None and not isinstance(expires, date):
            errors.append(FixtureError(f"{where}: expires must be a date (YYYY-MM-DD)", file=file, case=cid, line=line))
            continue
        entries.append(QuarantineEntry(id=cid, reason=str(item.get("reason", "")), owner=str(item.get("owner", "")),
                                       expires=expires))
    if errors:
        raise FixtureErrors(errors)
    return entries


def active_ids(entries: Sequence[QuarantineEntry], today: date | None = None) -> dict[str, QuarantineEntry]:
    return {e.id: e for e in entries if e.active(today)}


def expired_notes(entries: Sequence[QuarantineEntry], case_ids: set[str], today: date | None = None) -> list[str]:
    return [f"quarantine of {e.id} expired on {e.expires} (owner {e.owner}): it counts again"
            for e in entries if not e.active(today) and e.id in case_ids]


def apply_quarantine(report, entries: Sequence[QuarantineEntry], today: date | None = None):
    """The report with quarantined cases marked and the verdict/exit code recomputed without them.

    Called by the CLI on the runner's report; a report without quarantined cases comes
    back unchanged (same object).
    """
    from harness.run.aggregate import exit_code, summarize

    active = active_ids(entries, today)
    ids = {c.id for c in report.cases}
    notes = expired_notes(entries, ids, today)
    hit = [c for c in report.cases if c.id in active]
    if not hit and not notes:
        return report
    cases = tuple(replace(c, quarantined=True) if c.id in active else c for c in report.cases)
    planned = {name: counts.planned for name, counts in report.layers.items()}
    summary, layers = summarize(cases, planned)
    code = report.exit_code
    if code in (0, 1):  # budget (3) and infrastructure (4) exits are not the quarantine's to change
        code = exit_code(summary)
    notes += [f"quarantined: {c.id} ({c.status}) - {active[c.id].reason} (owner {active[c.id].owner})"
              for c in hit if c.status != "pass"]
    return replace(report, cases=cases, summary=summary, layers=layers, exit_code=code,
                   notes=tuple(report.notes) + tuple(notes))


def quarantine_info(entries: Sequence[QuarantineEntry]) -> dict[str, Mapping[str, Any]]:
    return {e.id: {"reason": e.reason, "owner": e.owner, "expires": e.expires.isoformat() if e.expires else None}
            for e in entries}
