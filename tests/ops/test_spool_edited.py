"""A pending-upload spool file edited by hand or by another program (issue 24, round 3, session 29):
`harness upload --pending` leaves it as it is and says why, never crashes (exit 70 before on
`files: 5`, `shard: "x"`), and never puts a file from outside the run's folder into the bucket
(`"rel": "../../harness.toml"` was read and uploaded). The well-formed twin uploads."""

from __future__ import annotations

import json

import pytest
from ops_support import SECRET_KEY, make_project

from harness import cli


def _spooled(tmp_path, s3, capsys):
    """A run whose upload waits in the spool (its storage endpoint did not answer), and its spool file.
    The endpoint is pointed away for the run rather than the server stopped and started again."""
    cfg = make_project(tmp_path, storage=s3)
    text = cfg.read_text()
    cfg.write_text(text.replace(s3.endpoint, "http://127.0.0.1:9"))
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "r1"]) == 0
    cfg.write_text(text)
    [spool] = list((tmp_path / "reports" / ".pending").glob("*.json"))
    capsys.readouterr()
    return cfg, spool


@pytest.mark.parametrize("edit, says", [
    (lambda d: d.update(files=5), "files is not a list"),
    (lambda d: d.update(shard="x"), "shard is not an {index, count} object"),
    (lambda d: d["files"].append(5), "is not a {rel, key, size, md5} object"),
    (lambda d: d["files"][0].update(rel="../../harness.toml"), "outside its run folder or key prefix"),
    (lambda d: d["files"][0].update(key="elsewhere/x"), "outside its run folder or key prefix"),
    (lambda d: d.update(run_dir=5), "run_dir is 5, not text"),
])
def test_an_edited_spool_entry_is_left_and_said(tmp_path, s3, capsys, edit, says):
    cfg, spool = _spooled(tmp_path, s3, capsys)
    original = spool.read_text()
    data = json.loads(original)
    edit(data)
    spool.write_text(json.dumps(data))
    code = cli.main(["upload", "--pending", "--config", str(cfg)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code in (0, 1) and "internal error" not in text and SECRET_KEY not in text, text
    assert not any(k.endswith("harness.toml") or k.startswith("elsewhere") for k in s3.keys()), s3.keys()
    config_text = cfg.read_bytes()  # under the run's own key (junit.xml's) before: the file outside, uploaded
    assert not any(s3.client().get_object(Bucket=s3.bucket, Key=k)["Body"].read() == config_text for k in s3.keys())
    assert spool.read_text() == json.dumps(data)  # left as it is
    assert says in text, text
    spool.write_text(original)  # the twin: uploaded
    assert cli.main(["upload", "--pending", "--config", str(cfg)]) == 0
    assert "uploaded r1" in capsys.readouterr().out
    assert any(k.endswith("r1/results.json") for k in s3.keys())
