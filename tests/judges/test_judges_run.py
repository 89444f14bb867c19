"""harness judges end to end on a small suite (hash embedder test double, offline critic)."""

import asyncio
import json
from pathlib import Path

from harness.config import load_config
from harness.judges.evaluate import judge
from harness.judges.report import latest_figures
from harness.judges.run import JudgeOptions, exit_code, run_judges
from harness.cases import load_cases
from tests.reasoning_project import write_project

CASES = """
layer: reasoning
defaults: {channel: telegram, judges: {reply: "The document says: {answer}"}}
cases:
  - id: q-effect
    source: doc.txt
    tags: [question, answerable]
    send: "what did the trial in {docs}/doc.txt find?"
    expect:
      reply: {regex: "(?i)^the document says: .*30 percent"}
      similarity: {min: 0.5}
      critic: {factuality: {}}
  - id: q-funder
    source: doc.txt
    tags: [question, answerable]
    send: "who funded {docs}/doc.txt?"
    expect:
      reply: {regex: "(?i)^the document says:"}
      similarity: {min: 0.5, contrast: [q-effect], reason: "hash embedder in a test"}
"""
DOC = ("The Harbour Trial reduced symptoms by 30 percent in 240 adults. It was funded by the Lindqvist Trust "
       "and the Morrow Foundation.\n")
GOLDENS = {"q-effect": "The Harbour Trial reduced symptoms by 30 percent in 240 adults.",
           "q-funder": "It was funded by the Lindqvist Trust and the Morrow Foundation."}


def setup(tmp_path: Path):
    write_project(tmp_path, CASES, DOC, GOLDENS, "1")
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "t"\ntelegram_webhook = "http://127.0.0.1:1/t"\n'
                   f'[embeddings]\nbackend = "hash"\ncache_dir = "{tmp_path / "cache"}"\n')
    return load_config(cfg, environ={})


def _judge(config, options):
    """``harness judges`` as the command line runs it: the project's cases loaded, then judged."""
    return run_judges(config, options, load_cases(config.fixtures_dir(), derive=False))


def options(tmp_path, out="out", **kw):
    return JudgeOptions(out=tmp_path / out, progress=lambda line: None, **kw)


def test_judges_json_has_the_contract_shape_and_the_cache_is_hit_on_an_unchanged_suite(tmp_path):
    config = setup(tmp_path)
    first = asyncio.run(_judge(config, options(tmp_path)))
    data = json.loads((tmp_path / "out" / "judges.json").read_text())
    assert (tmp_path / "out" / "judges.html").read_text().startswith("<!doctype html>")
    assert set(data) >= {"kinds", "goldens", "health", "cases"}
    assert set(data["kinds"]) == {"number", "polarity", "entity", "omission", "substitution", "stale", "format"}
    for k in data["kinds"].values():
        assert set(k) == {"mutations", "caught"} and 0 <= k["caught"] <= k["mutations"]
    assert set(data["goldens"]) == {"total", "passed"} and data["goldens"]["total"] == 2
    assert set(data["health"]) == {"examples", "accuracy_all", "kappa", "undecided"}
    assert data["health"]["examples"] == 2
    assert data["cases"] and all(set(c) == {"id", "kind", "mutation", "caught_by"} for c in data["cases"])
    assert sum(k["mutations"] for k in data["kinds"].values()) == len(data["cases"])
    assert sum(k["caught"] for k in data["kinds"].values()) == sum(bool(c["caught_by"]) for c in data["cases"])
    assert data["kinds"]["number"]["mutations"] >= 2 and data["kinds"]["substitution"]["mutations"] == 2
    assert set(data["thresholds"]) == {"q-effect", "q-funder"}
    assert first["meta"]["cache"]["misses"] > 0

    second = asyncio.run(_judge(config, options(tmp_path, "out2")))
    assert second["meta"]["cache"]["misses"] == 0 and second["meta"]["cache"]["hits"] > 0
    assert second["kinds"] == first["kinds"] and second["cases"] == first["cases"]
    latest = latest_figures(tmp_path)
    assert latest is not None and latest["path"].endswith("judges.json") and latest["lines"]


def test_min_catch_sets_the_exit_code(tmp_path):
    config = setup(tmp_path)
    strict = asyncio.run(_judge(config, options(tmp_path, min_catch=1.0, use_cache=False)))
    lenient = asyncio.run(_judge(config, options(tmp_path, "o2", min_catch=0.0, use_cache=False)))
    missed = [k for k, v in strict["kinds"].items() if v["mutations"] and v["caught"] < v["mutations"]]
    assert strict["meta"]["below_min_catch"] == sorted(missed)
    assert lenient["meta"]["below_min_catch"] == []
    assert exit_code(strict) == (1 if missed or strict["golden_failures"] else 0)


def test_caught_means_a_judged_check_failed(tmp_path):
    config = setup(tmp_path)
    from harness.judges.run import make_services

    case = {c.id: c for c in load_cases(tmp_path / "fixtures")}["q-effect"]
    services = make_services(config, options(tmp_path))

    async def go():
        right = await judge(case, 0, "The document says: " + GOLDENS["q-effect"], "", services)
        wrong_regex = await judge(case, 0, "The document says: it reduced symptoms by 60 percent.", "", services)
        invented = await judge(case, 0, "The document says: The Harbour Trial reduced symptoms by 30 percent "
                                        "in 990 adults.", "", services)
        await services.aclose()
        return right, wrong_regex, invented

    right, wrong_regex, invented = asyncio.run(go())
    assert right.passed and not right.caught
    assert wrong_regex.caught_by == ["reply.regex"]  # pure check failed: services not asked (like the runner)
    assert all(e.check == "reply.regex" for e in wrong_regex.evidence)
    assert invented.caught and "critic.factuality" in invented.caught_by


def test_judges_files_pass_the_redactor(tmp_path):
    from harness import redact
    from harness.judges.report import write

    key = "sk-" + "Z" * 30
    previous = redact.install(redact.Redactor({}))
    try:
        write(tmp_path, {"kinds": {}, "goldens": {"total": 1, "passed": 0}, "health": {},
                         "cases": [{"id": "q", "kind": "stale", "mutation": f"reply quoting {key}", "caught_by": []}]})
    finally:
        redact.install(previous)
    for name in ("judges.json", "judges.html"):
        assert "ZZZZZZZZ" not in (tmp_path / name).read_text(), name


def test_no_phase_goes_silent_longer_than_the_progress_interval(tmp_path, monkeypatch):
    """issue 26: a cold run says where it is at least every PROGRESS_S seconds (it was silent
    for minutes in the threshold and health phases); a slow judge makes every phase long."""
    import harness.judges.run as R

    monkeypatch.setattr(R, "PROGRESS_S", 0.05)
    real = R.judge

    async def slow(*a, **kw):  # longer than PROGRESS_S: the verdicts run all at once (R.CONCURRENCY)
        await asyncio.sleep(0.2)
        return await real(*a, **kw)

    monkeypatch.setattr(R, "judge", slow)
    lines: list[str] = []
    config = setup(tmp_path)
    asyncio.run(_judge(config, JudgeOptions(out=tmp_path / "out", progress=lines.append, use_cache=False)))
    beats = [line for line in lines if line.startswith("judges: judging: ")]
    assert beats and all(" judged (0 from the cache), " in line for line in beats), lines
    monkeypatch.setattr(R, "PROGRESS_S", 3600.0)  # the twin: nothing slow enough, no heartbeat
    quiet: list[str] = []
    asyncio.run(_judge(config, JudgeOptions(out=tmp_path / "out2", progress=quiet.append, use_cache=False)))
    assert not [line for line in quiet if line.startswith("judges: judging: ")]
