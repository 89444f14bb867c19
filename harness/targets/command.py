"""The target's command before it starts: what would stop it from starting (``command_problem``:
a missing program, a script that is not there, a folder), and the start-up guard every started
target runs under (``guarded``: the kernel stops it when the harness dies)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from harness.redact import inert

# Exec'd in the target's process before its own command: ask the kernel to SIGTERM it when
# the harness dies (even by SIGKILL), so a killed run never leaves the agent running. It
# replaces itself with the command (same pid), so stopping and logs work as before.
_GUARD = ("import ctypes, os, signal, sys\n"
          "ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)\n"
          "if os.getppid() != int(sys.argv[1]): sys.exit(0)\n"
          "try:\n"
          "    os.execvp(sys.argv[2], sys.argv[2:])\n"
          "except OSError as e:\n"
          "    sys.stderr.write('harness: cannot run the target command %r: %s\\n' % (sys.argv[2], e.strerror or e))\n"
          "    sys.exit(127)\n")


def guarded(cmd: list[str]) -> list[str]:
    """``cmd`` wrapped so the target dies with the harness (Linux); unchanged elsewhere."""
    if not sys.platform.startswith("linux"):
        return cmd
    # -S: the guard needs only the standard library (ctypes), not site-packages; skipping the
    # site module halves its start-up, which is on the run's clock. The command it execs starts
    # as it always did.
    return [sys.executable, "-S", "-c", _GUARD, str(os.getpid()), *cmd]


def command_problem(command: list[str], cwd: Path, env: dict[str, str]) -> str | None:
    """Why ``command`` cannot be started (None if it can): its program is missing, a folder or
    not executable, or an argument holds a NUL. ``harness check`` and the start share it."""
    import shutil

    if not command:
        return None
    for arg in command:
        if "\0" in arg:
            return f"[target].command argument {arg!r} holds a NUL character"
    if not cwd.is_dir():  # execve's ENOENT/ENOTDIR would blame the program
        return (f"[target].cwd {str(cwd)!r} " + ("is a file, not a folder" if cwd.exists() else "does not exist")
                + ": the command is started there")
    program = command[0]
    if os.sep in program or (os.altsep and os.altsep in program):
        path = Path(program) if os.path.isabs(program) else cwd / program
        if not path.exists():
            if path.name.startswith("python") and path.parent.name in ("bin", "Scripts"):  # a venv's interpreter
                venv = path.parent.parent
                return (f"[target].command {program!r}: no such file ({path}): create the bot's virtualenv "
                        f"(python3 -m venv {venv}, then {venv}/bin/pip install the bot's packages) or name "
                        "the interpreter that has them")
            return f"[target].command {program!r}: no such file ({path})"
        if path.is_dir():
            return f"[target].command {program!r} is a folder, not a program"
        if not os.access(path, os.X_OK):
            return f"[target].command {program!r} is not executable (chmod +x {path}, or start it with its interpreter)"
        return _program_problem(program, path) or _script_problem(command, cwd)
    found = shutil.which(program, path=env.get("PATH", os.environ.get("PATH")))
    if found is None:
        return f"[target].command {program!r} is not on PATH"
    return _program_problem(program, Path(found)) or _script_problem(command, cwd)


def _program_problem(program: str, path: Path) -> str | None:
    """An executable file the kernel will not run: a ``#!`` line naming an interpreter that is
    not there, or neither a ``#!`` line nor a binary (execve's ENOENT and ENOEXEC, which say
    only "No such file or directory" and "Exec format error")."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return None
    if head.startswith(b"#!"):
        line = head[2:].split(b"\n", 1)[0].strip().split()
        interp = line[0].decode("utf-8", "replace") if line else ""
        if not interp:
            return f"[target].command {program!r}: its #! line names no interpreter"
        if os.path.isabs(interp) and not os.path.exists(interp):
            return f"[target].command {program!r}: its #! line names {interp}, which does not exist"
        return None
    if head[:4] in (b"\x7fELF",) or head[:2] == b"MZ" or head[:4] in (b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
        return None
    return (f"[target].command {program!r} is neither a program nor a script with a #! line "
            "(start it with its interpreter, e.g. [\"sh\", ...] or [\"python\", ...])")


def _script_problem(command: list[str], cwd: Path) -> str | None:
    """``["python", "bot.py", ...]`` (or node, ruby...) whose script file is missing: said now,
    not as the interpreter's own error after the target failed to start."""
    if len(command) < 2 or command[1].startswith("-") or "{" in command[1]:
        return None
    name = os.path.basename(command[0]).lower()
    suffixes = {"python": (".py",), "node": (".js", ".mjs", ".cjs"), "ruby": (".rb",), "php": (".php",),
                "bash": (".sh",), "sh": (".sh",), "perl": (".pl",)}
    kind = next((k for k in suffixes if name == k or (name.startswith(k) and name[len(k):].lstrip("0123456789.") == "")),
                None)
    if kind is None or not command[1].lower().endswith(suffixes[kind]):
        return None
    script = Path(command[1]) if os.path.isabs(command[1]) else cwd / command[1]
    if not script.exists():
        return f"[target].command: the script {command[1]!r} does not exist ({script})"
    if script.is_dir():
        return f"[target].command: the script {command[1]!r} is a folder"
    return None


def _cmdline(pid: int, limit: int = 120) -> str:
    try:
        import psutil

        text = " ".join(psutil.Process(pid).cmdline()) or "?"
    except Exception:  # noqa: BLE001 - gone, or not ours to read
        return "?"
    return inert(text if len(text) <= limit else text[:limit] + "...")
