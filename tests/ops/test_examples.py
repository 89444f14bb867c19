"""The ready-to-use operations examples stay valid: they parse and name real harness commands."""

from __future__ import annotations

import shlex
from pathlib import Path

import yaml

from harness.cli.parser import build_parser as _parser
from harness.night.crontab import make_trigger

OPS = Path(__file__).resolve().parents[2] / "examples" / "ops"


def _harness_args(command: str) -> list[str]:
    words = shlex.split(command.replace("${{ matrix.shard }}", "1").replace("${{ needs.run-id.outputs.id }}", "X"))
    return words[words.index(next(w for w in words if w.endswith("harness"))) + 1:]


def test_crontab_lines_are_valid_cron_and_harness_commands():
    lines = [ln for ln in (OPS / "crontab").read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    assert len(lines) == 2
    for line in lines:
        fields = line.split(None, 5)
        make_trigger(" ".join(fields[:5]), "UTC")
        args = _harness_args(fields[5].split(">>")[0].split("&&")[-1])
        _parser().parse_args(args)  # a real harness command line
    assert "flock -n" in lines[0] and "timeout" in lines[0] and "--upload" in lines[0]


def test_oci_build_spec_shape():
    spec = yaml.safe_load((OPS / "build_spec.yaml").read_text())
    assert spec["version"] == 0.1 and spec["component"] == "build"
    assert {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} <= set(spec["env"]["vaultVariables"])
    assert all(s["type"] == "Command" and s["timeoutInSeconds"] > 0 for s in spec["steps"])
    assert "no schedule trigger" in (OPS / "build_spec.yaml").read_text()
    assert "oci devops build-run create" in (OPS / "build_spec.yaml").read_text()


def test_github_workflow_shape():
    wf = yaml.safe_load((OPS / "github-nightly.yml").read_text())
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads a bare `on` as true
    make_trigger(on["schedule"][0]["cron"], "UTC")
    assert "workflow_dispatch" in on
    steps = wf["jobs"]["nightly"]["steps"]
    assert any(s.get("uses", "").startswith("actions/upload-artifact") and s.get("if") == "always()" for s in steps)
    run = next(s["run"] for s in steps if "harness run" in s.get("run", ""))
    _parser().parse_args(_harness_args(run))


def test_examples_install_torch_cpu_and_post_the_github_summary():
    """Issue 16: the CPU wheel from PyTorch's CPU index; the night's summary through --format github."""
    wf = yaml.safe_load((OPS / "github-nightly.yml").read_text())
    for name, job in wf["jobs"].items():
        runs = "\n".join(s.get("run", "") for s in job.get("steps", []))
        if "pip install -e " in runs:  # every job that installs takes torch's CPU wheel first, then the models extra
            assert runs.index("download.pytorch.org/whl/cpu torch==2.13.0") < runs.index("pip install -e '.[models]'"), name
    summary = [s["run"] for s in wf["jobs"]["nightly"]["steps"] if "--format github" in s.get("run", "")]
    assert summary and "$GITHUB_STEP_SUMMARY" in summary[0]
    _parser().parse_args(_harness_args(summary[0].split(">>")[0]))
    pr = "\n".join(s.get("run", "") for s in wf["jobs"]["pull-request"]["steps"])
    assert "--format github" in pr and "gh pr comment" in pr
    spec = yaml.safe_load((OPS / "build_spec.yaml").read_text())
    install = next(s for s in spec["steps"] if "pip install" in s["command"])
    assert "scripts/torch_index.py" in install["command"] and install["timeoutInSeconds"] >= 1800
    assert (OPS.parents[1] / "scripts" / "torch_index.py").is_file()
