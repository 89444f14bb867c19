"""The cheap first look of the foreign-listener check (targets/procs.listens): the
target's own process holding the listening socket is told from /proc without scanning every
process; anything else is left to the full check."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from harness.targets.procs import listens as _leader_listens

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/net/tcp"), reason="Linux /proc only")


def test_the_process_holding_the_listener_is_seen_and_no_other():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert _leader_listens(os.getpid(), port)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], close_fds=True)
        try:
            assert not _leader_listens(child.pid, port)  # the wrong twin: it holds no such socket
        finally:
            child.kill()
            child.wait()
    with socket.socket() as s:  # bound, not listening: no LISTEN row
        s.bind(("127.0.0.1", 0))
        assert not _leader_listens(os.getpid(), s.getsockname()[1])


def test_a_gone_process_or_an_unreadable_proc_says_no(tmp_path):
    assert not _leader_listens(2**22 + 7, 1)
    assert not _leader_listens(os.getpid(), 80, proc=str(tmp_path))
