"""Helpers of the operations tests: a moto S3 server on loopback and a tiny echo project."""

from __future__ import annotations

import secrets
import textwrap
from pathlib import Path

from tests.agents.echo import TARGET_ENV

ACCESS_KEY = "AKIATESTOPS"
SECRET_KEY = "s3cr3t-" + "x" * 24  # must never show up in any output

ENV = TARGET_ENV  # the echo test-double agent's [target.env]


def echo_cases(n: int = 3) -> str:
    return "layer: robustness\ncases:\n" + "".join(
        f'  - id: echo-{i}\n    send: "m{i}"\n    expect: {{reply: {{contains: "echo: m{i}"}}, replies: {{exact: 1}}}}\n'
        for i in range(n))


class MotoS3:
    """A moto S3 server on 127.0.0.1 that a test can stop and start again on the same port."""

    def __init__(self):
        from moto.server import ThreadedMotoServer

        self._cls = ThreadedMotoServer
        self.server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        self.server.start()
        self.port = self.server.get_host_and_port()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.bucket = "nightly-" + secrets.token_hex(4)
        self.running = True
        c = self.client()
        c.create_bucket(Bucket=self.bucket)
        # Versioning makes every put visible: a key put twice has two versions.
        c.put_bucket_versioning(Bucket=self.bucket, VersioningConfiguration={"Status": "Enabled"})

    def client(self):
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name="us-east-1")

    def stop(self) -> None:
        if self.running:
            self.server.stop()
            self.server._server.server_close()  # refuse connections instead of leaving them hanging
            self.running = False

    def start(self) -> None:
        if not self.running:
            self.server = self._cls(ip_address="127.0.0.1", port=self.port, verbose=False)
            self.server.start()
            self.running = True

    def keys(self) -> list[str]:
        return sorted(o["Key"] for o in self.client().list_objects_v2(Bucket=self.bucket).get("Contents") or ())

    def versions(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.client().list_object_versions(Bucket=self.bucket).get("Versions") or ():
            out[v["Key"]] = out.get(v["Key"], 0) + 1
        return out

    def get_json(self, key: str):
        import json

        return json.loads(self.client().get_object(Bucket=self.bucket, Key=key)["Body"].read())


def make_project(tmp_path: Path, *, cases: str | None = None, mode: str = "", storage: MotoS3 | None = None,
                 extra: str = "") -> Path:
    """A harness project folder (fixtures + harness.toml) driving the in-process echo agent."""
    (tmp_path / "fixtures" / "robustness").mkdir(parents=True, exist_ok=True)
    (tmp_path / "fixtures" / "documents").mkdir(exist_ok=True)
    (tmp_path / "fixtures" / "robustness" / "echo.yaml").write_text(cases or echo_cases())
    write_config(tmp_path, mode=mode, storage=storage, extra=extra)
    return tmp_path / "harness.toml"


def write_config(tmp_path: Path, *, mode: str = "", storage: MotoS3 | None = None, extra: str = "") -> Path:
    text = ('[target]\nname = "echo"\ninprocess = "tests.agents.echo:make_app"\n'
            '[sandbox]\nsettle_s = 0.1\nreply_timeout_s = 3\nconcurrency = 1\n')
    if storage is not None:
        text += (f'[storage]\nurl = "s3://{storage.bucket}/chatbot"\nendpoint_url = "{storage.endpoint}"\n'
                 'region = "us-east-1"\naddressing_style = "path"\nretry_backoff_s = 0.01\ntimeout_s = 3\n')
    text += textwrap.dedent(extra) + ENV + (f'ECHO_MODE = "{mode}"\n' if mode else "")
    (tmp_path / "harness.toml").write_text(text)
    return tmp_path / "harness.toml"
