"""The run manifest: config hash without secrets, the git sha read from .git, the stored shape."""

from __future__ import annotations

import json

from ops_support import make_project

from harness import cli
from harness.config import load_config
from harness.night.manifest import config_hash, git_sha


def test_config_hash_changes_with_settings_but_not_with_secrets(tmp_path):
    cfg = make_project(tmp_path)
    base = config_hash(load_config(cfg, environ={}))
    assert base.startswith("sha256:") and base == config_hash(load_config(cfg, environ={}))
    # a secret in the environment (HARNESS_CRITIC_API_KEY would be an unknown [critic] key: exit 2)
    assert config_hash(load_config(cfg, environ={"HARNESS_LLM_API_KEY": "sk-secret", "CRITIC_API_KEY": "sk-2"})) == base
    assert config_hash(load_config(cfg, environ={"HARNESS_SANDBOX_SETTLE_S": "0.5"})) != base


def test_git_sha_is_read_from_the_repository_files(tmp_path):
    sha = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "agent"
    (repo / ".git" / "refs" / "heads").mkdir(parents=True)
    (repo / "src").mkdir()
    (repo / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    assert git_sha(repo / "src") == ""  # a ref that does not exist yet
    (repo / ".git" / "packed-refs").write_text(f"# pack-refs\n{sha} refs/heads/main\n")
    assert git_sha(repo / "src") == sha
    (repo / ".git" / "refs" / "heads" / "main").write_text(sha[::-1] + "\n")
    assert git_sha(repo) == sha[::-1]
    (repo / ".git" / "HEAD").write_text(sha + "\n")  # detached
    assert git_sha(repo) == sha
    assert git_sha(tmp_path / "nowhere-without-git") in ("", git_sha(tmp_path))


def test_results_json_and_summary_carry_the_manifest(tmp_path, s3, capsys):
    cfg = make_project(tmp_path, storage=s3)
    assert cli.main(["run", "--config", str(cfg), "--quiet", "--run-id", "20250301-020000-mani"]) == 0
    run = tmp_path / "reports" / "20250301-020000-mani"
    results = json.loads((run / "results.json").read_text())
    m = results["manifest"]
    for key in ("harness_version", "agent", "models", "golden_version", "price_table_version", "config_hash",
                "host", "python", "command"):
        assert m.get(key) not in (None, ""), key
    assert m["agent"]["name"] == "echo" and m["command"].startswith("harness run --config ")
    assert m["config_hash"] == config_hash(load_config(cfg))
    assert results["schema"] == "harness.results/1" and "summary" in results  # the contract's keys are kept
    assert json.loads((run / "manifest.json").read_text()) == m
    assert "manifest: agent echo" in (run / "summary.md").read_text()
    stored = s3.get_json("chatbot/runs/2025/03/01/20250301-020000-mani/results.json")
    assert stored["manifest"] == m
