"""The accepted baseline: the run that later diffs compare with, and the cases accepted since.

``harness baseline accept RUN [--case GLOB]... [--reason TEXT] [--by NAME]`` writes
``<reports>/baseline.json`` (and, when ``[storage]`` is configured, ``PREFIX/baseline.json``,
so that every machine diffs against the same baseline)::

    {"schema": "harness.baseline/1", "run_id", "accepted_by", "accepted_at", "reason", "note",
     "updated_at",
     "cases": {CASE_ID: {"run_id", "accepted_by", "accepted_at", "reason"}},
     "log": [{"run_id", "cases": [CASE_ID...] | null, "accepted_by", "accepted_at", "reason"}]}

Without ``--case`` the whole run becomes the baseline (``cases`` is emptied). With ``--case``
only the matching cases' records of RUN replace the baseline's, the way a snapshot tool's
``--snapshot-update`` / ``jest -u`` accepts one changed snapshot: ``cases`` says, per case,
which run holds its accepted record; every other case stays with ``run_id``
(``baseline_run_of``; ``baseline_results`` builds the composite results dict,
``with_case_acceptances`` the nights a learner reads). ``log`` keeps
every acceptance, newest last. ``note`` is ``reason``'s old name, kept for older readers.
Who accepted comes from ``--by``, else ``$USER`` (or ``git config user.name`` when USER is
unset); nothing else about the person is recorded.

``choose_base`` picks what a diff compares with: the named run, else the accepted
baseline (when it is not the run being compared), else the last full nightly run before it
(``harness.run.kind``: an ad-hoc --case or --repeat run is no previous night).
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Mapping, Sequence

from harness.errors import UsageError
from harness.night.history import RunSource

log = logging.getLogger("harness.night.baseline")

FILE = "baseline.json"
SCHEMA = "harness.baseline/1"
#: Acceptances kept in the record's log (the oldest are dropped first).
LOG_KEPT = 200


def _who() -> str:
    user = os.environ.get("USER") or os.environ.get("LOGNAME")
    if user:
        return user
    try:
        name = subprocess.run(["git", "config", "user.name"], capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        name = ""
    return name or "unknown"


def store_of(source: Any) -> Any:
    """The object store behind a run source (``RemoteRunSource`` or a combined one), or None."""
    for s in (source, getattr(source, "remote", None)):
        store = getattr(s, "store", None)
        if store is not None and hasattr(store, "get") and hasattr(store, "sc"):
            return store
    return None


def _parse(raw: Any) -> dict[str, Any] | None:
    try:
        data = json.loads(raw)
    except (TypeError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not data.get("run_id") or not isinstance(data["run_id"], str):
        return None
    cases = data.get("cases", {})
    if isinstance(cases, list) and all(isinstance(e, dict) for e in cases):
        # the learner's other form, [{glob, run_id, ...}] (night/learned.py): kept for it; the readers
        # here see no per-case acceptances in it (``_case_entries``)
        cases = {}
    if not isinstance(cases, dict) or not isinstance(data.get("log", []), list):
        return None  # the shape every reader relies on (a hand edit made `show` crash, exit 70)
    return data


def _case_entries(record: Mapping[str, Any]) -> dict[str, Any]:
    """The ``{case: {run_id, ...}}`` acceptances of a record ({} for the list-of-globs form)."""
    cases = record.get("cases")
    return cases if isinstance(cases, dict) else {}


def local_record_problem(reports_dir: str | os.PathLike[str]) -> str | None:
    """Why the local baseline.json, when there is one, is no baseline record (None when it is one
    or there is none): ``show`` says so instead of "no baseline accepted", ``accept`` refuses to
    write over it (the acceptances and the log it held would be lost)."""
    path = Path(reports_dir) / FILE
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        return f"{path} cannot be read ({getattr(exc, 'strerror', None) or exc})"
    if _parse(raw) is None:
        from harness.redact import inert

        start = inert(raw[:60]).replace("\n", " ")
        return f"{path} is not a baseline record (it starts {start!r})"
    return None


def _stored_record_is_readable(store: Any) -> None:
    """Before an accept writes baseline.json to storage: the stored one must be missing or a record.
    Storage that answers with something else (a proxy's or portal's page) would make the accept
    start from the local record alone and drop the other machines' acceptances and the log when it
    writes over it. Storage that does not answer is the put's to report (the accept stays local)."""
    from harness.errors import StorageError
    from harness.redact import inert

    key = store.sc.key(FILE)
    try:
        raw = store.get(key)
    except StorageError:  # storage down: the accept is kept locally, and its put says storage missed it
        return
    if raw is not None and _parse(raw) is None:
        start = inert(bytes(raw[:80]).decode("utf-8", "replace")).replace("\n", " ")
        raise StorageError(f"s3://{store.sc.bucket}/{key} is not a baseline record (it starts {start!r}); refusing "
                           "to write over it, which would drop the acceptances and the log it holds",
                           fix="check [storage] endpoint_url (a proxy or captive portal may be answering in its "
                               "place); if the object is really damaged, delete it and accept the baseline again")


def _stamp(record: Mapping[str, Any]) -> str:
    return str(record.get("updated_at") or record.get("accepted_at") or "")


def read_baseline(reports_dir: str | os.PathLike[str], source: Any = None) -> dict[str, Any] | None:
    """The accepted baseline record, or None when none was accepted (or the file is unreadable).

    With a ``source`` backed by object storage, the stored copy is read too and the newer of
    the two wins (another machine may have accepted since); storage that cannot be read leaves
    the local record, with a warning in the log.
    """
    try:
        local = _parse((Path(reports_dir) / FILE).read_text(encoding="utf-8"))
    except OSError:
        local = None
    store = store_of(source)
    if store is None:
        return local
    try:
        remote = _parse(store.get(store.sc.key(FILE)))
    except Exception as exc:  # StorageError, a timeout: the local record stands
        log.warning("the stored baseline was not read: %s: %s", type(exc).__name__, exc)
        return local
    if local is None or (remote is not None and _stamp(remote) > _stamp(local)):
        return remote
    return local


def baseline_run_of(record: Mapping[str, Any] | None, case_id: str) -> str | None:
    """The run holding ``case_id``'s accepted record: its own acceptance, else the baseline run."""
    if not record:
        return None
    entry = _case_entries(record).get(case_id)
    return str(entry.get("run_id")) if isinstance(entry, Mapping) and entry.get("run_id") else str(record["run_id"])


def baseline_results(source: RunSource, record: Mapping[str, Any],
                     base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The baseline as one results.json dict: the baseline run with each case accepted later
    replaced by its record from the run it was accepted from (``base``: the baseline run, when
    already loaded). A run that cannot be read keeps the baseline run's record of its cases,
    with a warning in the log. The dict carries ``baseline_record`` (the record)."""
    base = dict(base if base is not None else source.load(str(record["run_id"])))
    overrides = {cid: str(e["run_id"]) for cid, e in _case_entries(record).items()
                 if isinstance(e, Mapping) and e.get("run_id") and str(e["run_id"]) != str(record["run_id"])}
    if overrides:
        runs: dict[str, dict[str, Any] | None] = {}
        for run_id in sorted(set(overrides.values())):
            try:
                runs[run_id] = source.load(run_id)
            except (OSError, ValueError) as exc:
                log.warning("accepted run %s is unreadable; its cases keep the baseline run's record: %s",
                            run_id, exc)
                runs[run_id] = None
        cases = [dict(c) for c in base.get("cases") or () if isinstance(c, Mapping)]
        index = {str(c.get("id")): i for i, c in enumerate(cases)}
        for cid, run_id in overrides.items():
            found = next((c for c in ((runs.get(run_id) or {}).get("cases") or ())
                          if isinstance(c, Mapping) and str(c.get("id")) == cid), None)
            if found is None:
                continue
            found = {**found, "accepted_from": run_id}
            if cid in index:
                cases[index[cid]] = found
            else:
                cases.append(found)
        base["cases"] = cases
    base["baseline_record"] = dict(record)
    return base


def with_case_acceptances(source: RunSource, record: Mapping[str, Any] | None,
                          nights: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The accepted nights a baseline learner reads, with the per-case acceptances applied.

    ``nights``: the accepted baseline run first, then the nights like it (newest first, as a
    learner loads them). The first becomes ``baseline_results`` (each case accepted on its own
    taken from the run it was accepted from); the other nights lose those cases, since what a
    case did before its change was accepted is no longer what it is held to. Without per-case
    acceptances the nights come back as they are.
    """
    nights = [dict(n) for n in nights]
    overridden = {cid for cid, e in _case_entries(record or {}).items()
                  if isinstance(e, Mapping) and e.get("run_id") and str(e["run_id"]) != str((record or {}).get("run_id"))}
    if not nights or not overridden:
        return nights
    first = baseline_results(source, record, nights[0]) if record else nights[0]
    rest = [{**n, "cases": [c for c in n.get("cases") or () if not (isinstance(c, Mapping)
                                                                    and str(c.get("id")) in overridden)]}
            for n in nights[1:]]
    return [first, *rest]


def _save(reports_dir: Path, record: Mapping[str, Any], store: Any) -> list[str]:
    """Write the record locally and (when configured) to storage; returns where it went."""
    from harness.fileio import atomic_write_text

    text = json.dumps(record, indent=2, ensure_ascii=False) + "\n"
    path = atomic_write_text(Path(reports_dir) / FILE, text)
    where = [str(path)]
    if store is not None:
        from harness.errors import StorageError

        key = store.sc.key(FILE)
        try:
            store.put(key, text.encode("utf-8"), "application/json")
        except StorageError as exc:  # the local record stands; say that the others will not see it
            raise StorageError(f"baseline.json was written to {path} but not to storage: {exc.message}",
                               fix="run the same `harness baseline accept` again once storage answers "
                                   "(machines that read the baseline from storage still see the old one)") from None
        where.append(f"s3://{store.sc.bucket}/{key}")
    return where


def accept_baseline(reports_dir: str | os.PathLike[str], source: RunSource, run_id: str,
                    note: str = "", *, cases: Sequence[str] = (), by: str | None = None) -> dict[str, Any]:
    """Bless ``run_id`` (it must be a readable run of ``source``); returns the record written.

    ``cases`` (globs over case ids): accept only those cases of the run; the rest of the
    baseline stays. It needs a baseline to update, and at least one case of the run must
    match each glob. ``note``: why (``--reason``); ``by``: who (default ``$USER``). The record
    is also put in object storage when ``source`` reads from it; its ``where`` key (not
    saved) says where it went.
    """
    run_id = resolve_run_id(source, run_id)
    load_run(source, run_id)  # a run edited into another shape is no baseline (every diff would refuse it)
    problem = local_record_problem(reports_dir)
    if problem:
        raise UsageError(f"{problem}; refusing to write over it", fix="restore it from storage or a backup; if it "
                         "is really damaged, delete it and accept the baseline again")
    who = (by or "").strip() or _who()
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    store = store_of(source)
    if store is not None:
        _stored_record_is_readable(store)  # never write over a stored record that could not be read
    if not cases:
        previous = read_baseline(reports_dir, source) or {}
        record: dict[str, Any] = {"schema": SCHEMA, "run_id": run_id, "accepted_by": who, "accepted_at": now,
                                  "reason": note, "note": note, "updated_at": now, "cases": {},
                                  "log": list(previous.get("log") or ())}
        record["log"].append({"run_id": run_id, "cases": None, "accepted_by": who, "accepted_at": now,
                              "reason": note})
    else:
        previous = read_baseline(reports_dir, source)
        if previous is None:
            raise UsageError("--case updates an accepted baseline, and none was accepted yet",
                             fix=f"accept a whole run first: harness baseline accept {run_id}")
        if isinstance(previous.get("cases"), list):  # the list-of-globs form: its entries would be lost
            raise UsageError("baseline.json holds its case acceptances as a list of globs, which --case cannot "
                             "add to without losing them", fix="write them as {case: {run_id: ...}} or accept "
                             f"the whole run again (harness baseline accept {run_id}), then --case")
        ids = [str(c.get("id")) for c in load_run(source, run_id).get("cases") or () if isinstance(c, Mapping)]
        chosen: list[str] = []
        for glob in cases:
            hits = [i for i in ids if fnmatch.fnmatchcase(i, glob)]
            if not hits:
                raise UsageError(f"--case {glob!r} matches no case of run {run_id}",
                                 fix="harness history lists the cases; a glob such as 'url-*' picks several")
            chosen += [i for i in hits if i not in chosen]
        record = {**previous, "schema": SCHEMA, "updated_at": now,
                  "cases": dict(_case_entries(previous)), "log": list(previous.get("log") or ())}
        for cid in chosen:
            if run_id == str(previous["run_id"]):
                record["cases"].pop(cid, None)  # back to the baseline run's own record
            else:
                record["cases"][cid] = {"run_id": run_id, "accepted_by": who, "accepted_at": now, "reason": note}
        record["log"].append({"run_id": run_id, "cases": chosen, "accepted_by": who, "accepted_at": now,
                              "reason": note})
    record["log"] = record["log"][-LOG_KEPT:]
    where = _save(Path(reports_dir), record, store)
    return {**record, "where": where}


def resolve_run_id(source: RunSource, ref: str) -> str:
    """A run id from what a person typed: an id, a unique id prefix, a run folder path, or ``latest``."""
    ids = source.run_ids()
    if not ids:
        raise UsageError(f"no runs found in {source.name}", fix="run `harness run` first, or pass --out DIR (the reports folder)")
    if ref in ("latest", "last"):
        return ids[-1]
    name = Path(ref.rstrip("/")).name if ("/" in ref or ref.endswith("results.json")) else ref
    if name == "results.json":
        name = Path(ref).parent.name
    if name in ids:
        return name
    matches = [i for i in ids if i.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    hint = "several runs match" if matches else "no such run"
    raise UsageError(f"{hint}: {ref!r} in {source.name}", fix=f"latest runs: {', '.join(ids[-3:])}")


def load_run(source: RunSource, run_id: str) -> dict[str, Any]:
    try:
        return source.load(run_id)
    except (OSError, ValueError) as exc:
        raise UsageError(f"run {run_id} is unreadable: {exc}", fix="pick another run (harness history lists them)") \
            from None


def choose_base(source: RunSource, reports_dir: str | os.PathLike[str], new_run_id: str,
                kind: str | None = "nightly") -> tuple[str | None, str]:
    """(base run id, why) for a diff of ``new_run_id``: the accepted baseline, else the last
    run before it of ``kind`` (``harness.run.kind``; default the last full nightly run, so an
    ad-hoc ``--case`` or ``--repeat`` run is never "the previous night"; None or ``any``: any
    run); (None, reason) when there is nothing to compare with."""
    from harness.run.kind import ANY, matches

    record = read_baseline(reports_dir, source)
    ids = source.run_ids()
    if record and record["run_id"] != new_run_id and record["run_id"] in ids:
        return record["run_id"], f"accepted baseline, by {record.get('accepted_by', '?')}"
    passed_over = 0
    for run_id in reversed([i for i in ids if i < new_run_id]):
        if kind not in (None, ANY):
            try:
                run = source.load(run_id)
            except (OSError, ValueError):  # unreadable: not a night to compare with
                continue
            if not matches(run, kind):
                passed_over += 1
                continue
        why = ("previous run" if kind in (None, ANY) or not passed_over else f"previous {kind} run") \
            + (" (the accepted baseline is this run)" if record and record["run_id"] == new_run_id else "") \
            + (f" ({passed_over} later run(s) of another kind passed over)" if passed_over else "")
        return run_id, why
    if passed_over:
        return None, f"no earlier {kind} run to compare with ({passed_over} run(s) of another kind)"
    return None, "no earlier run to compare with"


def load_base(source: RunSource, reports_dir: str | os.PathLike[str], base_id: str,
              base: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The base of a diff: the run ``base_id``, or, when it is the accepted baseline, the
    baseline with its later per-case acceptances (``baseline_results``)."""
    record = read_baseline(reports_dir, source)
    if record and str(record["run_id"]) == base_id:
        return baseline_results(source, record, base)
    return dict(base) if base is not None else load_run(source, base_id)


def acceptance_note(record: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What a diff or a history says about the baseline: its run, who, when, why, and the
    cases accepted since from other runs (``{"run_id", "accepted_by", "accepted_at", "reason",
    "cases": {CASE_ID: {...}}}``); None without a baseline."""
    if not record:
        return None
    return {"run_id": record.get("run_id"), "accepted_by": record.get("accepted_by"),
            "accepted_at": record.get("accepted_at"), "reason": record.get("reason") or record.get("note") or "",
            "cases": {cid: dict(e) for cid, e in _case_entries(record).items() if isinstance(e, Mapping)}}


def render_baseline(record: Mapping[str, Any] | None) -> str:
    """``harness baseline show``: the baseline run, who accepted it, when and why, the cases
    accepted since, and the last acceptances."""
    from harness.report.diff_text import acceptance_line, note_lines

    if not record:
        return "no baseline accepted; diffs compare with the previous run\n"
    lines = note_lines(acceptance_note(record), max_cases=1000)
    lines[0] = f"baseline: {record.get('run_id')}\n  accepted " + acceptance_line(record)
    history = record.get("log") or []
    if len(history) > 1:
        lines.append(f"{len(history)} acceptances, newest last:")
        lines += [f"  {e.get('accepted_at')} {e.get('accepted_by')}: {e.get('run_id')}"
                  + (f" ({len(e['cases'])} case(s): {', '.join(e['cases'][:5])}"
                     + (" ..." if len(e["cases"]) > 5 else "") + ")" if e.get("cases") else " (whole run)")
                  + (f": {e['reason']}" if e.get("reason") else "") for e in history[-20:]]
    return "\n".join(lines) + "\n"
