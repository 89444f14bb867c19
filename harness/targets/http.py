"""A webhook service: started from ``[target].command`` (or already running), polled ready,
stopped after the run, also on Ctrl-C and on failure (the whole process group)."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import aiohttp

from harness.config import Config, python_command
from harness.errors import TargetError
from harness.targets.base import Endpoints


# Exec'd in the target's process before its own command: ask the kernel to SIGTERM it when
# the harness dies (even by SIGKILL), so a killed run never leaves the agent running. It
# replaces itself with the command (same pid), so stopping and logs work as before.
_GUARD = ("import ctypes, os, signal, sys\n"
          "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)\n"
          "if os.getppid() != int(sys.argv[1]): sys.exit(0)\n"
          "os.execvp(sys.argv[2], sys.argv[2:])\n")


def guarded(cmd: list[str]) -> list[str]:
    """``cmd`` wrapped so the target dies with the harness (Linux); unchanged elsewhere."""
    if not sys.platform.startswith("linux"):
        return cmd
    return [sys.executable, "-c", _GUARD, str(os.getpid()), *cmd]


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
    def __init__(self, config: Config, log_path: Path | None = None):
        self.config = config
        self.t = config.target
        self.port = (free_port() if self.t.port == 0 else self.t.port)
        self.log_path = log_path
        self._proc: subprocess.Popen | None = None
        self._log = None

    def _values(self, placeholders: dict[str, str]) -> dict[str, str]:
        values = dict(placeholders)
        if self.port is not None:
            values["port"] = str(self.port)
        return values

    async def start(self, placeholders: dict[str, str]) -> Endpoints:
        values = self._values(placeholders)
        if self.t.command:
            env = dict(os.environ)
            env.update({k: fill(v, values) for k, v in self.t.env.items()})
            env.setdefault("PYTHONUNBUFFERED", "1")
            cwd = self.config.resolve(self.t.cwd) if self.t.cwd else self.config.root
            cmd = [fill(c, values) for c in python_command(self.t.command)]
            if self.log_path:
                self.log_path.parent.mkdir(parents=True, exist_ok=True)
                self._log = open(self.log_path, "ab")
            try:
                self._proc = subprocess.Popen(guarded(cmd), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                              stdout=self._log or subprocess.DEVNULL,
                                              stderr=subprocess.STDOUT if self._log else subprocess.DEVNULL,
                                              start_new_session=True)
            except OSError as exc:
                raise TargetError(f"could not start the target {cmd!r}: {exc}",
                                  fix="check [target].command and [target].cwd") from exc
        if self.t.ready_url:
            version = await self._wait_ready(fill(self.t.ready_url, values))
        else:
            version = ""
            if self.t.command:
                # No health endpoint: ready once a webhook's port accepts connections.
                hook = fill(self.t.telegram_webhook or self.t.whatsapp_webhook, values)
                if hook:
                    await self._wait_port(hook)
        return Endpoints(telegram_webhook=fill(self.t.telegram_webhook, values),
                         whatsapp_webhook=fill(self.t.whatsapp_webhook, values),
                         state_url=fill(self.t.state_url, values),
                         version=self.t.version or version)

    async def _wait_ready(self, url: str) -> str:
        deadline = time.monotonic() + self.t.ready_timeout_s
        last = "no answer yet"
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=2)) as session:
            while time.monotonic() < deadline:
                if self._proc is not None and self._proc.poll() is not None:
                    raise TargetError(f"the target exited with code {self._proc.returncode} before it was ready"
                                      f"\n{self.log_tail()}", fix="run [target].command by hand to see why")
                try:
                    async with session.get(url) as resp:
                        if resp.status == 200:
                            try:
                                data = await resp.json(content_type=None)
                                return str(data.get("version", "")) if isinstance(data, dict) else ""
                            except ValueError:
                                return ""
                        last = f"HTTP {resp.status}"
                except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
                    last = type(exc).__name__
                await asyncio.sleep(0.1)
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
                await asyncio.sleep(0.1)
        await self.stop()
        raise TargetError(f"nothing accepted connections at {host}:{port} within {self.t.ready_timeout_s:.0f}s"
                          f"\n{self.log_tail()}", fix="check the webhook URL and port, or set ready_url")

    def alive(self) -> bool:
        return self._proc is None or self._proc.poll() is None

    async def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            for _ in range(50):
                if proc.poll() is not None:
                    break
                await asyncio.sleep(0.1)
            else:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait()
        if self._log:
            self._log.close()
            self._log = None

    def log_tail(self, lines: int = 30) -> str:
        if not self.log_path or not self.log_path.exists():
            return ""
        text = self.log_path.read_text(errors="replace").splitlines()[-lines:]
        return "target log (last lines):\n" + "\n".join("  " + line for line in text)
