"""A webhook service: started from ``[target].command`` (or already running), polled ready,
stopped after the run, also on Ctrl-C and on failure: its whole process tree, also workers
that left the process group, SIGKILL after a grace period (``harness.targets.procs``). What
it prints goes through the run's redactor into target.log (``LogPump``)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from harness.config import Config, python_command
from harness.errors import TargetError
from harness.redact import active, inert
from harness.targets import procs
from harness.targets.base import Endpoints
from harness.targets.command import _cmdline, command_problem, guarded

log = logging.getLogger("harness.targets.http")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fill(text: str, values: dict[str, str]) -> str:
    """Fill ``{name}`` placeholders; unknown names are left as they are (a bot's own braces)."""
    for key, value in values.items():
        text = text.replace("{" + key + "}", value)
    return text


class HttpTarget:
    #: Seconds between SIGTERM and SIGKILL when the target is stopped.
    grace_s: float = procs.GRACE_S

    def __init__(self, config: Config, log_path: Path | None = None, state_dir: Path | None = None):
        self.config = config
        self.t = config.target
        self.port = (free_port() if self.t.port == 0 else self.t.port)
        self.log_path = log_path
        # Where the started tree is recorded, for the next run after a kill -9: the reports folder.
        self.state_dir = state_dir or (log_path.parent.parent / ".targets" if log_path else
                                       config.resolve(".harness-cache") / "targets")
        self._proc: subprocess.Popen | None = None
        self._log: LogPump | None = None
        self.tree: procs.ProcessTree | None = None
        self._spawned = False

    def _values(self, placeholders: dict[str, str]) -> dict[str, str]:
        values = dict(placeholders)
        if self.port is not None:
            values["port"] = str(self.port)
        return values

    def spawn(self, placeholders: dict[str, str]) -> None:
        """Start ``[target].command`` (once; nothing for a target that is already running).
        Synchronous and light (no aiohttp): ``harness run`` calls it right after the config
        loads (``harness.run.early``); ``start`` calls it when nobody did. Call it from the
        thread that outlives the target (the main thread): the guard's PR_SET_PDEATHSIG fires
        when the thread that forked the target ends, not only the process."""
        if self._spawned or not self.t.command:
            return
        self._spawned = True
        values = self._values(placeholders)
        ended = procs.reap_leftovers(self.state_dir)  # what a killed run left behind
        if ended:
            log.warning("ended %d leftover target process(es) of a killed run: %s", len(ended), ended)
        self._refuse_taken_ports(values)
        tag = secrets.token_hex(8)
        env = dict(os.environ)
        env.update({k: fill(v, values) for k, v in self.t.env.items()})
        env.setdefault("PYTHONUNBUFFERED", "1")
        env[procs.TAG_ENV] = tag  # inherited by every process of the tree, also one that leaves the group
        cwd = self.config.resolve(self.t.cwd) if self.t.cwd else self.config.root
        cmd = [fill(c, values) for c in python_command(self.t.command)]
        problem = command_problem(cmd, Path(cwd), env)
        if problem:
            raise TargetError(problem, fix="[target].command is the argv that starts your bot, e.g. "
                                           '["python", "mybot.py"] ("python" is the harness\'s interpreter)')
        try:
            self._proc = subprocess.Popen(guarded(cmd), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE if self.log_path else subprocess.DEVNULL,
                                          stderr=subprocess.STDOUT if self.log_path else subprocess.DEVNULL,
                                          start_new_session=True)
        except OSError as exc:
            shown = repr(cmd) if len(repr(cmd)) <= 300 else repr(cmd)[:300] + "..."
            raise TargetError(f"could not start the target {shown}: {exc.strerror or exc}",
                              fix="check [target].command and [target].cwd") from exc
        try:
            if self.log_path:
                self._log = LogPump(self._proc.stdout, self.log_path)
            self.tree = procs.ProcessTree(tag, self._proc.pid, self.state_dir / f"{tag}.json")
            self.tree.watch()
        except BaseException:
            self.stop_now()
            raise

    def _refuse_taken_ports(self, values: dict[str, str]) -> None:
        """Before the target starts, nothing may answer where the harness will look for it: a
        process already there (yesterday's bot on a fixed ``port``) would answer ``ready_url``
        and be judged in the target's place while the target dies on "address in use"."""
        from urllib.parse import urlsplit

        seen = set()
        for key in ("ready_url", "telegram_webhook", "whatsapp_webhook", "state_url"):
            url = fill(getattr(self.t, key) or "", values)
            try:
                parts = urlsplit(url)
                host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
            except ValueError:
                continue
            if not url or host not in ("127.0.0.1", "localhost", "::1") or (host, port) in seen:
                continue
            seen.add((host, port))
            try:
                with socket.create_connection((host, port), timeout=0.5):
                    pass
            except OSError:
                continue
            raise TargetError(
                f"something already answers at {host}:{port} ([target].{key} {url}) before the target has "
                "started: another process holds the port, and the harness would judge it instead of the target",
                fix=f"stop the process listening on port {port} (e.g. `ss -ltnp 'sport = :{port}'`), "
                    "or set [target].port = 0 for a free port each run")

    async def start(self, placeholders: dict[str, str]) -> Endpoints:
        values = self._values(placeholders)
        self.spawn(placeholders)
        if self.t.ready_url:
            version = await self._wait_ready(fill(self.t.ready_url, values))
            await self._refuse_foreign_listener(fill(self.t.ready_url, values), "ready_url")
        else:
            version = ""
            # No health endpoint: ready once a webhook's port accepts connections (a target said to
            # be already running too: nothing there is exit 4, not a night of failed cases)
            hook = fill(self.t.telegram_webhook or self.t.whatsapp_webhook, values)
            if hook:
                await self._wait_port(hook)
                if self.t.command:
                    await self._refuse_foreign_listener(hook, "telegram_webhook" if self.t.telegram_webhook
                                                        else "whatsapp_webhook")
        return Endpoints(telegram_webhook=fill(self.t.telegram_webhook, values),
                         whatsapp_webhook=fill(self.t.whatsapp_webhook, values),
                         state_url=fill(self.t.state_url, values),
                         version=self.t.version or version)

    async def _wait_ready(self, url: str) -> str:
        import aiohttp  # here, not at the top: ``spawn`` runs before the harness has imported aiohttp

        deadline = time.monotonic() + self.t.ready_timeout_s
        last = "no answer yet"
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
            while time.monotonic() < deadline:
                if self._proc is not None and self._proc.poll() is not None:
                    raise TargetError(f"the target exited with code {self._proc.returncode} before it was ready"
                                      f"\n{self.log_tail()}", fix="run [target].command by hand to see why")
                try:
                    # not followed: a redirect to another process must not make this one "ready"
                    async with session.get(url, allow_redirects=False) as resp:
                        if resp.status == 200:
                            from harness.channels import read_capped

                            try:  # a health answer without end is not read into memory
                                data = json.loads(await read_capped(resp, 1_000_000))
                                return str(data.get("version", ""))[:200] if isinstance(data, dict) else ""
                            except (ValueError, RecursionError):
                                return ""
                        last = f"HTTP {resp.status}"
                except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                    last = type(exc).__name__
                await asyncio.sleep(0.02)  # start-up is on the clock: poll often
        await self.stop()
        raise TargetError(f"the target was not ready at {url} within {self.t.ready_timeout_s:.0f}s ({last})"
                          f"\n{self.log_tail()}", fix="check ready_url, or raise [target].ready_timeout_s")

    async def _wait_port(self, url: str) -> None:
        from urllib.parse import urlsplit

        parts = urlsplit(url)
        host, port = parts.hostname or "127.0.0.1", parts.port or (443 if parts.scheme == "https" else 80)
        deadline = time.monotonic() + self.t.ready_timeout_s
        while time.monotonic() < deadline:
            if self._proc is not None and self._proc.poll() is not None:
                raise TargetError(f"the target exited with code {self._proc.returncode} before it was ready"
                                  f"\n{self.log_tail()}", fix="run [target].command by hand to see why")
            try:
                _, writer = await asyncio.open_connection(host, port)
                writer.close()
                return
            except OSError:
                await asyncio.sleep(0.02)  # start-up is on the clock: poll often
        await self.stop()
        if not self.t.command:
            raise TargetError(f"nothing accepted connections at {host}:{port} within {self.t.ready_timeout_s:.0f}s: "
                              "[target] has no command, so the target must be running already, and it is not",
                              fix="start the bot first, or set [target].command so the harness starts it")
        raise TargetError(f"nothing accepted connections at {host}:{port} within {self.t.ready_timeout_s:.0f}s"
                          f"\n{self.log_tail()}", fix="check the webhook URL and port, or set ready_url")

    async def _refuse_foreign_listener(self, url: str, key: str) -> None:
        """The port that answered must be the target's: a process that was listening there
        before the target started (it bound the port between the harness's look and the
        target's bind, the race ``_refuse_taken_ports`` cannot close) is refused, exit 4, and
        so is a target that exited while something else answered. A listener the harness cannot
        see (another user's, a container's proxy started with the target) is left alone."""
        if self._proc is None or self.tree is None:
            return
        problem = await asyncio.to_thread(self._foreign_listener, url)
        if problem is None:
            return
        await self.stop()
        raise TargetError(f"{problem} ([target].{key} {url}): the harness would judge it instead of the target"
                          f"\n{self.log_tail()}",
                          fix="stop the other process (e.g. `ss -ltnp`), or set [target].port = 0 for a free port "
                              "each run")

    def _foreign_listener(self, url: str) -> str | None:
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(url)
            host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            return None
        if host not in ("127.0.0.1", "localhost", "::1", "0.0.0.0"):
            return None
        if self._proc is not None and self._proc.poll() is not None:
            return (f"the target exited with code {self._proc.returncode}, yet something answers on port {port}: "
                    "another process holds it")
        if self._proc is not None and procs.listens(self._proc.pid, port):
            return None  # the target's own process holds the socket: no scan of every process
        try:
            import psutil

            owners = {c.pid for c in psutil.net_connections(kind="inet")
                      if c.status == psutil.CONN_LISTEN and c.laddr and c.laddr.port == port}
        except Exception:  # noqa: BLE001 - no permission, no /proc: nothing to tell
            return None
        if not owners or None in owners:
            return None  # a listener of another user or namespace: cannot say whose it is
        members = self.tree.scan() if procs.SUPPORTED else {}
        if owners & set(members):
            return None
        since = members.get(self._proc.pid) if self._proc is not None else None
        older = []
        for pid in sorted(owners):
            started = procs.start_time(pid)
            if started is not None and since is not None and started < since:
                older.append(pid)
        if not older:
            return None  # started with the target (a container's port proxy, say): not yesterday's bot
        return (f"port {port} is answered by process {older[0]} ({_cmdline(older[0])}), which was running "
                "before the target started: the target did not bind it (address in use?)")

    def alive(self) -> bool:
        return self._proc is None or self._proc.poll() is None

    async def stop(self) -> None:
        """End the whole tree (SIGTERM, SIGKILL after ``grace_s``), then close target.log."""
        await asyncio.to_thread(self.stop_now)

    def stop_now(self) -> None:
        """``stop``, synchronously (blocks up to ``grace_s`` and a few seconds more)."""
        proc, self._proc = self._proc, None
        tree, self.tree = self.tree, None
        if tree is not None:
            tree.end(self.grace_s, proc.poll if proc is not None else None)
        elif proc is not None and proc.poll() is None:  # not Linux: the process group only
            procs.terminate({}, self.grace_s, proc.pid, proc.poll)
        if proc is not None:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                log.warning("the target (pid %d) did not exit after SIGKILL", proc.pid)
        if self._log:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 30) -> str:
        if self._log:
            self._log.flush()
        if not self.log_path or not self.log_path.exists():
            return ""
        try:
            with open(self.log_path, "rb") as fh:  # its end only: the log may be as big as the cap
                fh.seek(max(0, fh.seek(0, os.SEEK_END) - 64 * 1024))
                tail = fh.read()
        except OSError:
            return ""
        text = inert(tail.decode("utf-8", errors="replace")).splitlines()[-lines:]
        return "target log (last lines):\n" + "\n".join("  " + line for line in text)


class LogPump:
    """Copies the target's output into target.log through the run's redactor, in a thread:
    a secret the agent prints never reaches the disk (nor the bucket the log is uploaded to)."""

    #: Bytes held back when a chunk ends mid-line, so a secret cut by the chunk is seen whole.
    OVERLAP = 512
    CHUNK = 64 * 1024
    #: target.log's size limit: past it the output is still drained (the agent never blocks on a
    #: full pipe) but only its last ``TAIL`` bytes are kept, written at the end after a note.
    CAP = 50_000_000
    TAIL = 256 * 1024

    def __init__(self, stream: IO[bytes], path: Path):
        from harness.fileio import open_append

        self._out = open_append(path)  # a FIFO or folder left there (a resumed run's folder) never blocks
        self._written = self._out.tell()
        self._dropped = 0
        self._tail = b""
        self._stream = stream
        self._lock = threading.Lock()
        self._pending = b""
        self._thread = threading.Thread(target=self._run, name="harness-target-log", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        fd = self._stream.fileno()
        while True:
            try:
                data = os.read(fd, self.CHUNK)
            except OSError:
                data = b""
            if not data:
                break
            with self._lock:
                buf = self._pending + data
                cut = buf.rfind(b"\n") + 1
                if not cut and len(buf) > self.CHUNK:
                    cut = len(buf) - self.OVERLAP
                self._pending = buf[cut:]
                self._emit(buf[:cut])
        self.flush()

    def _emit(self, data: bytes) -> None:
        if not data or self._out.closed:
            return
        if self._written + len(data) > self.CAP:  # an agent printing without end never fills the disk
            self._dropped += len(data)
            self._tail = (self._tail + data)[-self.TAIL:]
            return
        self._out.write(active().binary(data))
        self._written += len(data)
        self._out.flush()

    def _close_tail(self) -> None:
        if self._dropped and not self._out.closed:
            kept = len(self._tail)
            self._out.write(f"\n[harness: target.log reached {self.CAP:,} bytes; {self._dropped - kept:,} bytes of "
                            f"the target's output were dropped; its last {kept:,} bytes follow]\n".encode())
            cut = self._tail.find(b"\n") + 1  # from a line's start: a secret cut at the edge stays out
            self._out.write(active().binary(self._tail[cut:]))
            self._dropped, self._tail = 0, b""

    def flush(self) -> None:
        """Write what is held back (the end of an unfinished line)."""
        with self._lock:
            data, self._pending = self._pending, b""
            self._emit(data)

    def close(self) -> None:
        self._thread.join(timeout=5)  # the pipe ends when the last process of the tree is gone
        self.flush()
        with self._lock:
            self._close_tail()
            self._out.close()
        try:
            self._stream.close()
        except OSError:
            pass
