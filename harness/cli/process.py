"""The command's process: when it started (``harness run``'s overhead counts from there), garbage
collection paused while the modules load, SIGTERM as Ctrl-C."""

from __future__ import annotations

import os
import signal
import time

#: When this command started: the wall time of ``harness overhead`` counts from here. For the
#: process's own command the process's start (``command_start``), else ``main``'s call.
started_at = time.time()
own_command = False


def command_start() -> float:
    """The process's start (the interpreter's own start-up included) for the process's own
    command, else when ``main`` was called. Linux tells a process's age to the clock tick
    (/proc/self/stat starttime against /proc/uptime); psutil's create_time is not used: it
    adds the boot time in whole seconds, up to a second off."""
    if own_command:
        try:
            with open("/proc/self/stat", encoding="ascii") as fh:
                start_ticks = int(fh.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
            with open("/proc/uptime", encoding="ascii") as fh:
                age = float(fh.read().split()[0]) - start_ticks / os.sysconf("SC_CLK_TCK")
            if 0 <= age:
                return min(started_at, time.time() - age)
        except (OSError, ValueError, IndexError):  # not Linux: from the CLI module's import
            pass
    return started_at



_gc_paused = False


def loading() -> None:
    """Start-up of the process's own command: no garbage collection while the modules load
    (most of what start-up allocates is module objects that live until the end; collecting
    meanwhile costs 30-40 ms before a run's target can start). ``loaded`` turns it back on."""
    import gc

    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True


def loaded() -> None:
    """The modules are loaded (``cmd_run`` calls it before the run starts, ``_main`` for the
    other commands): freeze what loaded out of the collector's reach and collect again as usual."""
    import gc

    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()


def exiting() -> None:
    """The process ends next: take what the command made out of the garbage collector's
    reach (``gc.freeze``), so the interpreter's last collection does not walk all of it
    (50-100 ms after a run, only to free memory the OS takes back anyway). Everything the
    command writes is written and closed by now; atexit handlers and the final flush of
    stdout and stderr still run. In-process callers pass ``argv`` and are not affected."""
    import gc

    gc.freeze()


def _interrupted(signum, frame) -> None:
    raise KeyboardInterrupt


def sigterm_interrupts():
    """SIGTERM (CI cancelling a job, systemd stopping a unit) ends a run like Ctrl-C: the run's
    finally blocks stop the target's whole process tree instead of the interpreter dying at once.
    Returns the handler it replaced (None off the main thread, where signals cannot be set)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None):  # someone (a test runner, the scheduler) handles it already
        return None
    signal.signal(signal.SIGTERM, _interrupted)
    return previous

