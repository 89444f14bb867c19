"""What wraps one ``harness run`` beyond running cases: lock, resume, shard, manifest, upload.

``cli/run.cmd_run`` stays the one place a run is driven; this module hooks into it at four
points (``RunFlow`` is entered around it by the CLI and kept on ``args.flow``):

    RunFlow.__enter__   for --resume read the run's manifest (its selection) and journal
                        (the finished cases); the run id; the start manifest (nothing written)
    flow.select(cases)  the --shard slice
    flow.begin(cases)   all validated: take the run lock, write manifest.json; the prior cases
    flow.finish(report) the results.json dict: manifest, shard info, resumed cases' turns
    flow.upload(...)    [storage]: this run, then whatever the spool still holds
"""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from harness.errors import ConfigError, UsageError
from harness.fileio import atomic_write_text
from harness.redact import active
from harness.night.manifest import MANIFEST_FILE, finish_manifest, llm_models, start_manifest
from harness.night.runlock import RunLock

IDENTITY_RANGE = 1_000_000
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")
#: Names the reports folder holds besides the runs: a run of that name would mix with them.
RESERVED_RUN_IDS = {"judges": "`harness judges`'s folder (judges.json, judges.html)",
                    "baseline.json": "the accepted baseline record"}


class RunFlow:
    def __init__(self, args: Any):
        self.args = args
        self.config = None
        self.out = Path("reports")
        self.run_id = ""
        self.shard: tuple[int, int] | None = None
        self.prior: dict[str, Any] = {}
        self.changed_on_resume: list[str] = []
        """Finished cases of a resumed run whose definition changed since: they run again."""
        self.basis_changed: list[str] = []
        """What every verdict rests on and changed since a resumed run started (config, goldens,
        documents, the agent's or the harness's commit): every case runs again."""
        """Finished cases of a resumed run, as CaseResults, by id."""
        self.prior_records: dict[str, dict[str, Any]] = {}
        """The same, as their journal lines (which keep the turns' transcripts)."""
        self.manifest: dict[str, Any] = {}
        self.upload_enabled = False
        self.original_started_at = ""
        self._lock: RunLock | None = None

    # ------------------------------------------------------------------ start

    def __enter__(self) -> "RunFlow":
        from harness.config import load_config
        from harness.run.early import new_run_id  # light: the runner itself is imported later
        from harness.night.shards import parse_shard
        from harness.night.store import storage_config

        args = self.args
        config = self.config = load_config(args.config)
        self.out = Path(args.out) if args.out else config.resolve("reports")
        sc = storage_config(config)
        if args.upload and sc is None:
            raise ConfigError("--upload needs a [storage] section", file=str(config.path or ""),
                              fix='[storage] url = "s3://bucket/prefix" (see docs/OPERATIONS.md)')
        self.upload_enabled = sc is not None and args.upload is not False
        if args.resume and args.run_id and args.resume != args.run_id:
            raise UsageError("--resume and --run-id name different runs", fix="give only --resume RUN_ID")
        run_id = args.resume or args.run_id
        if run_id and not RUN_ID.fullmatch(run_id):
            raise UsageError(f"run id {run_id!r} has characters a folder or object key should not",
                             fix="letters, digits, '.', '_' and '-' only")
        if run_id and run_id.lower() in RESERVED_RUN_IDS:  # the reports folder's own entries
            raise UsageError(f"run id {run_id!r} is the name of {RESERVED_RUN_IDS[run_id.lower()]} in the reports "
                             "folder", fix="pick another --run-id (or none: one is made from the time)")
        # Nothing is written here: a usage, config or fixture error found after this (exit 2)
        # must leave no trace. The lock and the run folder come in ``begin``.
        if args.resume:
            self._load_resume(args.resume)
        elif run_id and (self.out / run_id).exists():
            raise UsageError(f"run {run_id} already exists in {self.out}",
                             fix=f"--resume {run_id} continues it; or give another --run-id")
        self.run_id = run_id or new_run_id()
        if args.shard:
            self.shard = parse_shard(args.shard)
        selection = {"layers": list(args.layer), "cases": list(args.case), "shard": args.shard,
                     "repeat": args.repeat, "fixtures": args.fixtures}
        if not self.manifest:
            self.manifest = start_manifest(config, self._argv(), selection)
        basis = run_basis(config, args)
        if args.resume:
            self.basis_changed = _basis_changes(self.manifest, basis)
        self.manifest["basis"] = basis
        self.manifest["config_hash"] = basis["config"]
        args.flow = self
        return self

    def begin(self, cases: Sequence[Any]) -> dict[str, Any]:
        """Everything is validated and the run starts: take the lock, write manifest.json.

        Returns the resumed run's finished cases that are still part of the selection.
        """
        if self._lock is None:
            self._lock = RunLock(self.out, command=" ".join(["harness", *self._argv()])).acquire()
        self.manifest.setdefault("started_at", datetime.now(timezone.utc).isoformat(timespec="seconds"))
        before = self.manifest.get("case_hashes") if isinstance(self.manifest.get("case_hashes"), dict) else {}
        now = {c.id: case_hash(c) for c in cases}
        if self.basis_changed and self.prior:  # every verdict was reached on another basis
            print(f"harness: resume: {' and '.join(self.basis_changed)} changed since run {self.run_id} was started: "
                  f"the {len(self.prior)} finished case(s) run again", file=sys.stderr)
            self.prior.clear()
            self.prior_records.clear()
        changed = sorted(cid for cid in self.prior if cid in now and before.get(cid) != now[cid])
        if changed:  # a verdict on another definition is stale: those cases run again
            for cid in changed:
                self.prior.pop(cid, None)
                self.prior_records.pop(cid, None)
            self.changed_on_resume = changed
            print(f"harness: resume: {len(changed)} case(s) changed since the run was started and run again: "
                  f"{', '.join(changed[:10])}{' ...' if len(changed) > 10 else ''}", file=sys.stderr)
        self.manifest["case_hashes"] = {**before, **now}
        run_dir = self.out / self.run_id
        run_dir.mkdir(parents=True, exist_ok=True)
        self._write_manifest(run_dir)
        return self.prior_for(cases)

    @property
    def identity_offset(self) -> int:
        """Per resume, a fresh range of chat ids and update ids (the killed process used the
        ones below; a run uses far fewer than a million)."""
        if not self.args.resume:
            return 0
        return IDENTITY_RANGE * max(1, len(self.manifest.get("resumed") or ()))

    def _argv(self) -> list[str]:
        argv = getattr(self.args, "argv", None)
        return list(argv) if argv is not None else sys.argv[1:]

    def _load_resume(self, run_id: str) -> None:
        from harness.report.journal import read_journal
        from harness.report.jsonread import case_from_dict

        args = self.args
        run_dir = self.out / run_id
        journal = run_dir / "results.jsonl"
        if not journal.exists():
            raise UsageError(f"no journal to resume: {journal} does not exist",
                             fix="--resume takes a run id from the --out folder (default reports/)")
        from harness.fileio import read_regular_bytes

        try:
            manifest = json.loads(read_regular_bytes(run_dir / MANIFEST_FILE))
        except (OSError, ValueError, RecursionError):
            manifest = {}
        manifest = _readable_manifest(manifest, run_dir / MANIFEST_FILE)
        selection = manifest.get("selection") or {}
        # The resumed run keeps the original's selection unless the command line gives one.
        if not args.layer:
            args.layer = list(selection.get("layers") or ())
        if not args.case:
            args.case = list(selection.get("cases") or ())
        if args.shard is None and selection.get("shard"):
            args.shard = selection["shard"]
        if args.repeat == 1 and selection.get("repeat"):
            args.repeat = int(selection["repeat"])
        if args.fixtures is None and selection.get("fixtures"):
            args.fixtures = selection["fixtures"]
        try:
            records = read_journal(journal)
        except OSError as exc:  # a FIFO or a folder left in its place
            raise UsageError(f"cannot resume: {journal} {exc.strerror or exc}",
                             fix="a run's results.jsonl is a file the run wrote; start a new run") from None
        for record in records:  # the last line of an id wins
            try:
                result = case_from_dict(record)
            except ValueError:
                continue  # a malformed line: that case runs again
            self.prior[result.id] = result
            self.prior_records[result.id] = record
        if manifest:
            self.manifest = manifest
            self.manifest.setdefault("resumed", []).append({
                "at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "finished_before": len(self.prior), "command": "harness " + " ".join(self._argv())})
        self.original_started_at = str(manifest.get("started_at") or "")

    def __exit__(self, *exc: object) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # ------------------------------------------------------------------ during

    def select(self, cases: Sequence[Any]) -> list[Any]:
        """The --shard slice of ``cases`` (all of them without --shard)."""
        from harness.night.shards import select_shard

        if self.shard is None:
            return list(cases)
        mine = select_shard(cases, *self.shard)
        if not mine:
            raise UsageError(f"shard {self.shard[0]}/{self.shard[1]} has no case ({len(cases)} selected in all)",
                             fix="use fewer shards than cases")
        return mine

    def prior_for(self, cases: Sequence[Any]) -> dict[str, Any]:
        """The resumed run's finished cases that are still part of the selection."""
        wanted = {c.id for c in cases}
        return {k: v for k, v in self.prior.items() if k in wanted}

    # ------------------------------------------------------------------ end

    def finish(self, report: Any, report_dict: dict[str, Any] | None = None) -> dict[str, Any]:
        """The results.json dict of the run: the contract's keys plus manifest and shard.
        ``report_dict`` is ``report``'s results.json dict when the caller has built it already
        (it is copied, not changed)."""
        from harness.report.jsonfile import report_to_dict

        d = dict(report_dict) if report_dict is not None else report_to_dict(report)
        if self.prior_records:
            d["cases"] = [self.prior_records[c["id"]] if c["id"] in self.prior_records
                          and not (c.get("turns") or []) else c for c in d["cases"]]
            if self.original_started_at:
                d["started_at"] = self.original_started_at
            resumed = sum(1 for c in d["cases"] if c["id"] in self.prior_records)
            d["notes"] = list(d.get("notes") or []) + [
                f"resumed: {resumed} case(s) kept from the journal, {len(d['cases']) - resumed} run now"]
        if self.changed_on_resume:
            d["notes"] = list(d.get("notes") or []) + [
                f"resumed: {len(self.changed_on_resume)} case(s) changed since the run was started "
                f"(their definitions differ), so their earlier verdicts were dropped and they ran again: "
                f"{', '.join(self.changed_on_resume)}"]
        if self.basis_changed:
            d["notes"] = list(d.get("notes") or []) + [
                f"resumed: {' and '.join(self.basis_changed)} changed since the run was started, so no earlier "
                "verdict was kept: every case ran again"]
        if self.shard:
            d["shard"] = {"index": self.shard[0], "count": self.shard[1],
                          "cases": [c["id"] for c in d["cases"]]}
        self.manifest = finish_manifest(self.manifest, d, llm_models(report.cases))
        d["manifest"] = self.manifest
        run_dir = self.out / self.run_id
        self._write_manifest(run_dir)
        return d

    def _write_manifest(self, run_dir: Path) -> None:
        """The manifest's one write point, redacted (harness.redact)."""
        atomic_write_text(run_dir / MANIFEST_FILE, active().text(json.dumps(self.manifest, indent=1)))

    def upload(self, run_dir: Path, quiet: bool = False) -> list[Any]:  # noqa: ARG002 - quiet kept for callers
        """Upload this run, then retry the spool; never changes the run's exit code."""
        if not self.upload_enabled:
            return []
        from harness.night.storage import upload_pending, upload_run

        results = [upload_run(self.config, run_dir, self.out)]
        if results[0].complete:
            results += upload_pending(self.config, self.out)
        for r in results:
            if r.complete:  # one line even with --quiet: cron logs should say where the run went
                print(f"storage: {r.line()}")
            elif not r.complete:
                print(f"harness: storage: {r.line()}; kept in {self.out / '.pending'} "
                      "(harness upload --pending retries)", file=sys.stderr)
        return results


def _folder_digest(root: Path, limit: int = 200_000_000) -> str:
    """sha256 over the regular files under ``root`` (relative names and bytes, sorted; links,
    FIFOs and the like by name only, never opened); "none" for no such folder or an empty one."""
    import hashlib
    import os
    import stat

    if not root.is_dir():
        return "none"
    h, left, seen = hashlib.sha256(), limit, 0
    for path in sorted(p for p in root.rglob("*") if not p.name.startswith(".")):
        rel = path.relative_to(root).as_posix()
        try:
            info = os.lstat(path)
        except OSError:
            continue
        seen += 1
        h.update(rel.encode("utf-8", "replace") + b"\0")
        if stat.S_ISREG(info.st_mode) and info.st_size <= left:
            left -= info.st_size
            try:
                h.update(path.read_bytes())
            except OSError:
                h.update(b"?")
        else:
            h.update(f"{stat.S_IFMT(info.st_mode)}:{info.st_size}:{info.st_mtime_ns}".encode())
        h.update(b"\0")
    return "sha256:" + h.hexdigest()[:16] if seen else "none"


def run_basis(config: Any, args: Any) -> dict[str, str]:
    """What every verdict of a run rests on besides its case's definition: the effective config,
    the goldens, the documents, the agent's and the harness's commits (``--resume`` keeps no
    verdict reached on another basis)."""
    from harness.night.manifest import config_hash, git_sha, target_dir

    golden = Path(args.golden) if getattr(args, "golden", None) else config.golden_dir()
    docs = config.resolve(config.sandbox.docs_dir)
    return {"config": config_hash(config), "goldens": _folder_digest(golden), "documents": _folder_digest(docs),
            "agent_git_sha": git_sha(target_dir(config)), "harness_git_sha": git_sha(Path(__file__).parent)}


#: How a basis entry is named when it changed.
_BASIS_NAMES = {"config": "the config", "goldens": "the goldens", "documents": "the documents",
                "agent_git_sha": "the agent's commit", "harness_git_sha": "the harness's commit"}


def _basis_changes(manifest: dict[str, Any], now: dict[str, str]) -> list[str]:
    """What of ``now`` differs from the resumed run's manifest (a manifest written before the
    basis was recorded has its config hash and commits compared)."""
    before = manifest.get("basis")
    if not isinstance(before, dict):
        agent = manifest.get("agent") if isinstance(manifest.get("agent"), dict) else {}
        before = {"config": manifest.get("config_hash"), "agent_git_sha": agent.get("git_sha"),
                  "harness_git_sha": manifest.get("harness_git_sha")}
        before = {k: v for k, v in before.items() if v is not None}
    return [_BASIS_NAMES[k] for k in now if k in before and before[k] != now[k]]


def case_hash(case: Any) -> str:
    """A case's definition as a short hash: its turns, checks, faults and scripts as loaded
    (``--resume`` keeps a finished case's verdict only while this is unchanged)."""
    import hashlib

    fields = {k: v for k, v in vars(case).items() if k not in ("file",)} if hasattr(case, "__dict__") else case
    return hashlib.sha256(repr(fields).encode("utf-8", "replace")).hexdigest()[:16]


#: Selection fields of a manifest and the type each must have.
_SELECTION_TYPES = {"layers": list, "cases": list, "shard": str, "repeat": int, "fixtures": str}


def _readable_manifest(manifest: Any, path: Path) -> dict[str, Any]:
    """The manifest as the harness wrote it, or a refusal that names what was changed by hand."""
    problems = []
    if not isinstance(manifest, dict):
        problems.append(f"it holds a {type(manifest).__name__}, not a JSON object")
    else:
        selection = manifest.get("selection", {})
        if not isinstance(selection, dict):
            problems.append("selection is not a table")
        else:
            for key, kind in _SELECTION_TYPES.items():
                value = selection.get(key)
                if value is None:
                    continue
                if kind is int and (isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000):
                    problems.append(f"selection.{key} is {value!r}, not a number of repeats (1-1000)")
                elif kind is list and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
                    problems.append(f"selection.{key} is {value!r}, not a list of texts")
                elif kind is str and not isinstance(value, str):
                    problems.append(f"selection.{key} is {value!r}, not a path")
            shard = selection.get("shard")
            if isinstance(shard, str) and not re.fullmatch(r"\d{1,6}/\d{1,6}", shard.strip()):
                problems.append(f"selection.shard is {shard!r}, not I/N")
        for key in ("resumed",):
            if key in manifest and not isinstance(manifest[key], list):
                problems.append(f"{key} is not a list")
        if "case_hashes" in manifest and not isinstance(manifest["case_hashes"], dict):
            problems.append("case_hashes is not a table")
    if problems:
        raise UsageError(f"{path} is not the manifest the harness wrote: {'; '.join(problems)}",
                         fix="restore it, or delete it to resume with the command line's own --layer/--case "
                             "selection (every finished case in results.jsonl is then kept as it is)")
    return manifest
