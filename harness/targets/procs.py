"""The target's whole process tree, found, recorded and ended (Linux ``/proc``; a no-op elsewhere).

A started target gets a tag in its environment (``HARNESS_PROCESS_TAG=<random>``), which every
process it starts inherits, also a worker that double-forks or calls ``setsid`` to leave the
process group. While the target runs, ``ProcessTree.scan`` (every second, in a thread) finds
the tree: the group, the descendants, the tagged processes; and records each as (pid, start
time) in a state file ``<out>/.targets/<tag>.json`` with the harness's own pid and start time.

``ProcessTree.end`` sends SIGTERM to every member, waits the grace period, then SIGKILLs what is
left. If the harness itself is killed (kill -9), the state file stays; the next run's
``reap_leftovers`` reads it, and when its harness is gone it ends the recorded processes whose
start time still matches (a pid the kernel reused for something else is left alone) and every
process that still carries the tag.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import sys
import threading
import time
from pathlib import Path

log = logging.getLogger("harness.targets.procs")

TAG_ENV = "HARNESS_PROCESS_TAG"
#: Seconds between SIGTERM and SIGKILL.
GRACE_S = 5.0
#: Seconds between two scans of the tree while the target runs.
SCAN_EVERY_S = 1.0

LINUX = sys.platform.startswith("linux") and os.path.isdir("/proc")


def _stat(pid: int) -> list[str] | None:
    """Fields of /proc/<pid>/stat after the command name (field 3 onwards), or None."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return raw[raw.rfind(b")") + 2:].decode("ascii", "replace").split()


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (None: no such process, or a zombie)."""
    f = _stat(pid)
    if not f or f[0] in ("Z", "X"):
        return None
    return int(f[19])  # field 22 of stat


def _tagged(pid: int, tag: str) -> bool:
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return f"{TAG_ENV}={tag}".encode() in env.split(b"\0")


def _pids() -> list[int]:
    try:
        return [int(n) for n in os.listdir("/proc") if n.isdigit()]
    except OSError:
        return []


def alive(pid: int, started: int) -> bool:
    """True when ``pid`` is running and is the same process (same start time) as recorded."""
    return start_time(pid) == started


class ProcessTree:
    """The processes of one started target (see the module docstring)."""

    def __init__(self, tag: str, leader: int, state_file: Path | None):
        self.tag = tag
        self.leader = leader
        self.state_file = state_file
        self.members: dict[int, int] = {}
        """pid -> start time of every process seen in the tree."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        started = start_time(leader) if LINUX else None
        if started is not None:
            self.members[leader] = started
        self._save()

    def scan(self) -> dict[int, int]:
        """Find the tree now: the leader's group, its descendants, every tagged process."""
        if not LINUX:
            return dict(self.members)
        me = os.getpid()
        found: dict[int, int] = {}
        parents: dict[int, int | None] = {}
        for pid in _pids():
            if pid == me:
                continue
            f = _stat(pid)  # one read for the start time, the parent and the group
            if not f or f[0] in ("Z", "X"):
                continue
            st = int(f[19])
            parents[pid] = int(f[1])
            if pid in self.members and self.members[pid] == st:
                found[pid] = st
            elif int(f[2]) == self.leader or _tagged(pid, self.tag):
                found[pid] = st
        changed = True
        while changed:  # descendants of anything found (a child that cleared its environment)
            changed = False
            for pid, parent in parents.items():
                if pid not in found and parent in found:
                    st = start_time(pid)
                    if st is not None:
                        found[pid] = st
                        changed = True
        with self._lock:
            before = dict(self.members)
            self.members.update(found)
            if self.members != before:
                self._save()
        return found

    def _save(self) -> None:
        if self.state_file is None:
            return
        data = {"tag": self.tag, "owner": {"pid": os.getpid(), "start": start_time(os.getpid()) if LINUX else None},
                "processes": [{"pid": p, "start": s} for p, s in sorted(self.members.items())]}
        try:
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.state_file.with_suffix(".tmp")
            tmp.write_text(json.dumps(data), encoding="utf-8")
            os.replace(tmp, self.state_file)
        except OSError as exc:  # recording is a safety net; the run goes on without it
            log.warning("could not record the target's processes in %s: %s", self.state_file, exc)

    def watch(self) -> None:
        """Scan every SCAN_EVERY_S seconds in a daemon thread until ``end``."""
        if not LINUX or self._thread is not None:
            return

        def loop() -> None:
            while not self._stop.wait(SCAN_EVERY_S):
                try:
                    self.scan()
                except Exception as exc:  # pragma: no cover - never let the watcher die loudly
                    log.debug("process scan failed: %s", exc)

        self._thread = threading.Thread(target=loop, name="harness-target-procs", daemon=True)
        self._thread.start()

    def end(self, grace_s: float = GRACE_S, reap=None) -> list[int]:
        """SIGTERM the whole tree, SIGKILL what is left after ``grace_s``; the state file goes.
        ``reap`` (the leader's ``Popen.poll``) collects the leader so it is not left a zombie.
        Returns the pids that needed SIGKILL."""
        self._stop.set()
        self.scan()
        killed = terminate(dict(self.members), grace_s, leader_group=self.leader, reap=reap)
        if self.state_file is not None:
            self.state_file.unlink(missing_ok=True)
            _remove_if_empty(self.state_file.parent)
        return killed


def _remove_if_empty(folder: Path) -> None:
    """The reports folder holds only runs again once no target is recorded."""
    try:
        folder.rmdir()
    except OSError:
        pass


def terminate(members: dict[int, int], grace_s: float, leader_group: int | None = None, reap=None) -> list[int]:
    """SIGTERM every live member (and the group), wait up to ``grace_s``, SIGKILL the rest."""
    def live() -> dict[int, int]:
        if reap is not None:
            reap()
        return {p: s for p, s in members.items() if alive(p, s)} if LINUX else {}

    if leader_group is not None:
        _signal_group(leader_group, signal.SIGTERM)
    for pid in live():
        _signal(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    if leader_group is not None and leader_group in live():
        _wait_exit(leader_group, grace_s)  # the run waits for this: wake the moment the leader exits
    while live() and time.monotonic() < deadline:
        time.sleep(0.01)  # the rest of the tree (workers): notice their exit soon
    left = live()
    if leader_group is not None and left:
        _signal_group(leader_group, signal.SIGKILL)
    for pid in left:
        _signal(pid, signal.SIGKILL)
    deadline = time.monotonic() + 2.0
    while live() and time.monotonic() < deadline:
        time.sleep(0.02)
    return sorted(left)


def _wait_exit(pid: int, timeout: float) -> None:
    """Return once ``pid`` has exited (a zombie counts) or ``timeout`` passed: Linux's pidfd wakes
    the moment it exits; elsewhere (or when the pid is gone already) this returns at once."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd (not Linux 5.3+), or the process is gone
        return
    try:
        select.select([fd], [], [], max(0.0, timeout))
    except OSError:
        pass
    finally:
        os.close(fd)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def reap_leftovers(state_dir: Path, grace_s: float = 2.0) -> list[int]:
    """End what earlier, killed runs left behind (their state files in ``state_dir``).

    A state file whose harness is still running (another run at this moment) is left alone.
    Returns the pids ended.
    """
    if not LINUX or not Path(state_dir).is_dir():
        return []
    ended: list[int] = []
    for path in sorted(Path(state_dir).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            owner = data.get("owner") or {}
            tag = str(data["tag"])
            recorded = {int(p["pid"]): int(p["start"]) for p in data.get("processes") or ()}
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("unreadable process record %s: removed", path)
            path.unlink(missing_ok=True)
            continue
        if owner.get("pid") is not None and owner.get("start") is not None \
                and alive(int(owner["pid"]), int(owner["start"])):
            continue  # its harness still runs
        me = os.getpid()
        members = {p: s for p, s in recorded.items() if p != me and alive(p, s)}
        for pid in _pids():
            if pid != me and pid not in members and _tagged(pid, tag):
                st = start_time(pid)
                if st is not None:
                    members[pid] = st
        if members:
            log.warning("ending %d process(es) a killed run left behind (%s): %s", len(members), path.name,
                        ", ".join(map(str, sorted(members))))
            terminate(members, grace_s)
            ended += sorted(members)
        path.unlink(missing_ok=True)
    _remove_if_empty(Path(state_dir))
    return ended
