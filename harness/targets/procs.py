"""The target's whole process tree, found, recorded and ended (psutil: Linux, macOS, the BSDs).

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
import threading
import time
from pathlib import Path

import psutil

log = logging.getLogger("harness.targets.procs")

TAG_ENV = "HARNESS_PROCESS_TAG"
#: Seconds between SIGTERM and SIGKILL.
GRACE_S = 5.0
#: Seconds between two scans of the tree while the target runs.
SCAN_EVERY_S = 1.0

#: psutil reads the process table on Linux, macOS and the BSDs; signals and groups are POSIX.
SUPPORTED = os.name == "posix" and hasattr(os, "killpg")
#: The old name (the table used to be read from /proc by hand, on Linux only).
LINUX = SUPPORTED
_GONE = (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)


def _start(create_time: float) -> float:
    """A process's start time as recorded: psutil's create_time (seconds since the epoch) to 10 ms,
    the resolution of Linux's clock ticks, so a value read back from JSON compares equal."""
    return round(create_time, 2)


def start_time(pid: int) -> float | None:
    """The process's start time (None: no such process, a zombie, or not ours to read)."""
    try:
        proc = psutil.Process(pid)
        with proc.oneshot():
            if proc.status() in _GONE:
                return None
            return _start(proc.create_time())
    except (psutil.Error, ValueError):
        return None


def _tagged(pid: "int | psutil.Process", tag: str) -> bool:
    try:
        proc = pid if isinstance(pid, psutil.Process) else psutil.Process(pid)
        return proc.environ().get(TAG_ENV) == tag
    except (psutil.Error, OSError, ValueError):  # gone, another user's, or a kernel thread
        return False


def _pids() -> list[int]:
    try:
        return psutil.pids()
    except (psutil.Error, OSError):
        return []


def _group(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except OSError:
        return None


def alive(pid: int, started: float) -> bool:
    """True when ``pid`` is running and is the same process (same start time) as recorded."""
    return started is not None and start_time(pid) == _start(float(started))


#: The trees of this process that are running (an orphan the kernel hands the harness, as its
#: subreaper, can be told to belong to a tree only while there is one).
_LIVE: "set[ProcessTree]" = set()
_SUBREAPER: list[bool] = []


def become_subreaper() -> bool:
    """Linux: make the harness the subreaper of what it starts (``PR_SET_CHILD_SUBREAPER``), so a
    daemon that double-forks, calls ``setsid`` and clears its environment is re-parented to the
    harness instead of init, and is still found and ended with the run. Once per process."""
    if _SUBREAPER:
        return _SUBREAPER[0]
    ok = False
    if os.uname().sysname == "Linux":
        try:
            import ctypes

            ok = ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
        except (OSError, AttributeError):
            ok = False
    _SUBREAPER.append(ok)
    return ok


class ProcessTree:
    """The processes of one started target (see the module docstring)."""

    def __init__(self, tag: str, leader: int, state_file: Path | None):
        self.tag = tag
        self.leader = leader
        self.state_file = state_file
        self.members: dict[int, float] = {}
        """pid -> start time of every process seen in the tree."""
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        started = start_time(leader) if SUPPORTED else None
        if started is not None:
            self.members[leader] = started
        self._since = started or 0.0
        if SUPPORTED:
            become_subreaper()
            _LIVE.add(self)
        self._save()

    def scan(self) -> dict[int, float]:
        """Find the tree now: the leader's group, its descendants, every tagged process."""
        if not SUPPORTED:
            return dict(self.members)
        me = os.getpid()
        my_group = os.getpgid(0)
        leaders = {t.leader for t in list(_LIVE)}
        sole = _LIVE == {self}
        found: dict[int, float] = {}
        parents: dict[int, int | None] = {}
        starts: dict[int, float] = {}
        for proc in psutil.process_iter(["ppid", "status", "create_time"]):  # one read per process
            pid, info = proc.pid, proc.info
            if pid == me or info.get("status") in _GONE or info.get("create_time") is None:
                continue
            st = _start(info["create_time"])
            parents[pid], starts[pid] = info.get("ppid"), st
            if pid in self.members and self.members[pid] == st:
                found[pid] = st
            elif _group(pid) == self.leader or _tagged(proc, self.tag):
                found[pid] = st
            elif (sole and info.get("ppid") == me and pid not in leaders and st >= self._since
                  and _group(pid) not in (my_group, None)):
                # an orphan handed to the harness as subreaper, in a session of its own: a daemon the
                # target started (the harness's own children stay in its process group)
                found[pid] = st
        changed = True
        while changed:  # descendants of anything found (a child that cleared its environment)
            changed = False
            for pid, parent in parents.items():
                if pid not in found and parent in found:
                    found[pid] = starts[pid]
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
        data = {"tag": self.tag, "owner": {"pid": os.getpid(), "start": start_time(os.getpid()) if SUPPORTED else None},
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
        if not SUPPORTED or self._thread is not None:
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
        adopted = [p for p in self.members if p != self.leader]

        def reap_all() -> None:  # the leader through its Popen; adopted orphans are the harness's to wait for
            if reap is not None:
                reap()
            for pid in adopted:
                try:
                    os.waitpid(pid, os.WNOHANG)
                except (ChildProcessError, OSError):
                    pass

        killed = terminate(dict(self.members), grace_s, leader_group=self.leader, reap=reap_all)
        _LIVE.discard(self)
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


def terminate(members: dict[int, float], grace_s: float, leader_group: int | None = None, reap=None) -> list[int]:
    """SIGTERM every live member (and the group), wait up to ``grace_s``, SIGKILL the rest."""
    def live() -> dict[int, int]:
        if reap is not None:
            reap()
        return {p: s for p, s in members.items() if alive(p, s)} if SUPPORTED else {}

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
    if not SUPPORTED or not Path(state_dir).is_dir():
        return []
    ended: list[int] = []
    for path in sorted(Path(state_dir).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            owner = data.get("owner") or {}
            tag = str(data["tag"])
            recorded = {int(p["pid"]): float(p["start"]) for p in data.get("processes") or ()}
        except (OSError, ValueError, KeyError, TypeError):
            log.warning("unreadable process record %s: removed", path)
            path.unlink(missing_ok=True)
            continue
        if owner.get("pid") is not None and owner.get("start") is not None \
                and alive(int(owner["pid"]), float(owner["start"])):
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


def listens(pid: int, port: int, proc: str = "/proc") -> bool:
    """Does process ``pid`` itself hold a socket listening on ``port`` (Linux: the LISTEN rows
    of /proc/net/tcp and tcp6, their inodes among /proc/<pid>/fd)? The cheap first look of
    ``targets/http._foreign_listener``: psutil's answer reads every process's descriptors (0.1-0.4 s per
    run on a loaded machine); False (not seen, or not Linux) leaves it to that full check."""
    inodes: set[str] = set()
    want = f"{port:04X}"
    for table in ("tcp", "tcp6"):
        try:
            with open(f"{proc}/net/{table}", encoding="ascii", errors="replace") as fh:
                next(fh, None)
                for line in fh:
                    cols = line.split()
                    # local_address is ADDR:PORT in hex; st 0A is LISTEN; the inode is column 10
                    if len(cols) > 9 and cols[3] == "0A" and cols[1].rsplit(":", 1)[-1] == want:
                        inodes.add(cols[9])
        except OSError:
            continue
    if not inodes:
        return False
    try:
        fds = os.listdir(f"{proc}/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            link = os.readlink(f"{proc}/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:[") and link[8:-1] in inodes:
            return True
    return False
