"""Reports are written whole, and readable as the umask says (issue 25: they were 0600, which a
web server or another CI user cannot read)."""

from __future__ import annotations

import os
import stat

import pytest

from harness.fileio import atomic_write_text


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_report_files_follow_the_umask(tmp_path, umask, mode):
    old = os.umask(umask)
    try:
        path = atomic_write_text(tmp_path / "report.html", "<p>")
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    assert path.read_text() == "<p>"
