"""The moto S3 server fixture of the operations tests."""

from __future__ import annotations

import pytest
from ops_support import ACCESS_KEY, SECRET_KEY, MotoS3


@pytest.fixture
def s3(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    server = MotoS3()
    yield server
    server.stop()
