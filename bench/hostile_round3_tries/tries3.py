import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lib import *
base = BASE / "cli-base"
if not (base / "reports" / "r1" / "results.json").exists():
    d = project("cli-base", cases=echo_cases(3))
    print(cli(["run", "--config", d / "harness.toml", "--quiet", "--run-id", "r1"], d)[:2])
    print(cli(["run", "--config", d / "harness.toml", "--quiet", "--run-id", "r2"], d)[:2])
T = []
def t(name, argv, expect=(2,), says=None, prep=None, desc=None, exp="exit 2 with a fix", env=None, agree=None):
    T.append((name, argv, expect, says, prep, desc or " ".join(map(str, argv))[:150], exp, env, agree))

def jl(lines):  # replace r1's journal
    def f(d):
        (d / "reports/r1/results.jsonl").write_text("".join(l + "\n" for l in lines))
    return f
def manifest(edit):
    def f(d):
        p = d / "reports/r1/manifest.json"; m = json.loads(p.read_text()); edit(m); p.write_text(json.dumps(m))
    return f
def results(edit, run="r1"):
    def f(d):
        p = d / f"reports/{run}/results.json"; m = json.loads(p.read_text()); edit(m); p.write_text(json.dumps(m))
    return f
def raw(rel, text):
    def f(d):
        p = d / rel; p.parent.mkdir(parents=True, exist_ok=True); p.write_text(text)
    return f

R = ["run", "--config", "harness.toml", "--quiet"]
t("case-empty-glob", R + ["--case", ""], says="--case")
t("case-bracket", R + ["--case", "["])
t("k-empty", R + ["-k", ""], expect=(0,), desc="-k '' (pytest: selects all)")
t("k-and", R + ["-k", "and"], says="-k")
t("k-trailing-or", R + ["-k", "echo or"], says="-k")
t("k-unicode", R + ["-k", "écho"], says="-k")
t("shard-huge", R + ["--shard", "1/100000000000000000000"], expect=(0, 2))
t("shard-zero", R + ["--shard", "0/3"], says="shard")
t("shard-negative", R + ["--shard=-1/2"], says="shard")
t("shard-unicode-digits", R + ["--shard", "\u0661/\u0662"], expect=(0, 2))
t("shard-spaces", R + ["--shard", " 1 / 2 "], expect=(0, 2))
t("run-id-empty", R + ["--run-id", ""], expect=(0,), desc="--run-id '' (one is made from the time)")
t("run-id-newline", R + ["--run-id", "a\nb"], says="run id")
t("run-id-dot", R + ["--run-id", "."], says="run id")
t("run-id-pending", R + ["--run-id", ".pending"], says="run id")
t("run-id-lock", R + ["--run-id", ".harness.lock"], says="run id")
t("run-id-judges", R + ["--run-id", "judges"], says="judges", desc="--run-id judges (the folder `harness judges` writes into reports/)")
t("run-id-huge", R + ["--run-id", "a" * 300], says="run id")
t("run-id-unicode", R + ["--run-id", "nüt"], expect=(0, 2))
t("run-id-dash", R + ["--run-id", "-x"], expect=(2,))
t("run-id-exists", R + ["--run-id", "r1"], expect=(2,), says="r1", desc="--run-id naming a finished run (would overwrite it)")
t("concurrency-huge", R + ["--concurrency", "1001"], says="--concurrency")
t("maxfail-float", R + ["--maxfail", "1.5"], says="maxfail")
t("budget-zero", R + ["--budget-usd", "0"], expect=(0, 2, 3))
t("against-missing", R + ["--against", "nope"], says="nope")
t("kind-shard-no-shard", R + ["--kind", "shard"], expect=(0, 2))
t("repeat-neg", R + ["--repeat", "-1"], says="repeat")
t("layer-empty", R + ["--layer", ""], says="layer")
t("fixtures-file", R + ["--fixtures", "harness.toml"], says="fixtures")
t("golden-file", R + ["--golden", "harness.toml"], says="golden")
t("config-dir", R[:1] + ["--config", ".", "--quiet"], says="folder")
t("config-devnull", R[:1] + ["--config", "/dev/null", "--quiet"], expect=(0, 2))
t("config-fifo", R[:1] + ["--config", "fifo.toml", "--quiet"], prep=lambda d: os.mkfifo(d / "fifo.toml"), says="regular")
# resume
t("resume-missing", R + ["--resume", "nope"], says="nope")
t("resume-journal-tokens-int", R + ["--resume", "r1"], expect=(0,), prep=jl(['{"id": "echo-0", "layer": "robustness", "channel": "telegram", "status": "pass", "tokens": 5}']))
t("resume-journal-attempts-inf", R + ["--resume", "r1"], expect=(0,), prep=jl(['{"id": "echo-0", "layer": "robustness", "channel": "telegram", "status": "pass", "attempts": 1e400}']))
t("resume-journal-attempts-list", R + ["--resume", "r1"], expect=(0,), prep=jl(['{"id": "echo-0", "layer": "robustness", "channel": "telegram", "status": "pass", "attempts": [1]}']))
t("resume-journal-evidence-int", R + ["--resume", "r1"], expect=(0,), prep=jl(['{"id": "echo-0", "layer": "robustness", "channel": "telegram", "status": "pass", "evidence": [5]}']))
t("resume-journal-nan-cost", R + ["--resume", "r1"], expect=(0,), prep=jl(['{"id": "echo-0", "layer": "robustness", "channel": "telegram", "status": "pass", "cost_usd": NaN}']))
t("resume-journal-array-line", R + ["--resume", "r1"], expect=(0,), prep=jl(['[1, 2]', '5', 'null']))
t("resume-journal-deep", R + ["--resume", "r1"], expect=(0,), prep=jl(['[' * 100000 + ']' * 100000]))
t("resume-journal-nonutf8", R + ["--resume", "r1"], expect=(0,), prep=lambda d: (d / "reports/r1/results.jsonl").write_bytes(b'\xff\xfe{"id"\n'))
t("resume-journal-foreign-layer", R + ["--resume", "r1"], expect=(0,), prep=jl(['{"id": "echo-0", "layer": "cost", "channel": "whatsapp", "status": "pass"}']))
t("resume-manifest-cases-int", R + ["--resume", "r1"], expect=(0, 2), prep=manifest(lambda m: m.setdefault("selection", {}).update(cases=[5])))
t("resume-manifest-shard-list", R + ["--resume", "r1"], expect=(0, 2), prep=manifest(lambda m: m.setdefault("selection", {}).update(shard=[1, 2])))
t("resume-manifest-layers-unknown", R + ["--resume", "r1"], expect=(2,), prep=manifest(lambda m: m.setdefault("selection", {}).update(layers=["nope"])))
t("resume-manifest-fixtures-etc", R + ["--resume", "r1"], expect=(2,), prep=manifest(lambda m: m.setdefault("selection", {}).update(fixtures="/etc")))
t("resume-manifest-case-hashes-junk", R + ["--resume", "r1"], expect=(0,), prep=manifest(lambda m: m.update(case_hashes={"echo-0": [1]})))
t("resume-manifest-resumed-junk", R + ["--resume", "r1"], expect=(0,), prep=manifest(lambda m: m.update(resumed=[5, None])))
t("resume-manifest-started-int", R + ["--resume", "r1"], expect=(0,), prep=manifest(lambda m: m.update(started_at=5)))
# report
RP = ["report"]
t("report-cases-int", RP + ["reports/r1"], prep=results(lambda m: m.update(cases=[5])))
t("report-summary-str-cost", RP + ["reports/r1"], expect=(0, 2), prep=results(lambda m: m["summary"].update(cost_usd="x", latency={"first_reply_ms": {"p50": "a", "p95": 1}})))
t("report-evidence-junk", RP + ["reports/r1"], expect=(0, 2), prep=results(lambda m: m["cases"][0].update(evidence=[5, {"check": 5}], turns="x")))
t("report-format-md-junk", RP + ["reports/r1", "--format", "md"], expect=(0, 2), prep=results(lambda m: m["cases"][0].update(status=5, id=None)))
t("report-format-junit-junk", RP + ["reports/r1", "--format", "junit"], expect=(0, 2), prep=results(lambda m: m["cases"][0].update(status=5, id=[1], tags=5)))
t("report-format-github-junk", RP + ["reports/r1", "--format", "github"], expect=(0, 2), prep=results(lambda m: m["cases"][0].update(status="weird", evidence="x")))
t("report-notes-dict", RP + ["reports/r1"], expect=(0, 2), prep=results(lambda m: m.update(notes={"a": 1}, target="x", models=5)))
t("report-hostile-text", RP + ["reports/r1"], expect=(0,), prep=results(lambda m: m["cases"][0].update(error="</script><script>alert(1)</script>\x1b]0;x\x07")))
# history / diff / baseline / golden on corrupt records
HX = ["history", "--config", "harness.toml", "--local"]
t("history-corrupt-results", HX, expect=(0,), prep=raw("reports/r1/results.json", "{not json"))
t("history-results-wrong-types", HX, expect=(0,), prep=results(lambda m: m.update(cases={"a": 1}, summary=[1], started_at=5)))
t("history-last-negative", HX + ["--last", "-1"], says="last")
t("history-last-huge", HX + ["--last", "100000000000000000000"], expect=(0, 2))
t("history-parquet-dir", HX + ["--parquet", "reports"], says="parquet")
t("history-runs-case-junk", HX, expect=(0,), prep=results(lambda m: m["cases"].append({"id": 5, "status": [1]})))
DX = ["diff", "--config", "harness.toml", "--local"]
t("diff-corrupt-newest", DX, expect=(0, 1, 2), prep=results(lambda m: m.update(cases=[{"id": "x"}, 5]), run="r2"))
t("diff-summary-junk", DX, expect=(0, 1, 2), prep=results(lambda m: m.update(summary={"cost_usd": "lots", "pass_rate": "x"}), run="r2"))
BX = ["baseline", "--config", "harness.toml"]
t("baseline-show-corrupt", BX + ["show"], expect=(0, 2), prep=raw("reports/baseline.json", "[1, 2]"))
t("baseline-show-types", BX + ["show"], expect=(0, 2), prep=raw("reports/baseline.json", '{"run_id": 5, "cases": "x", "log": 7}'))
t("baseline-accept-corrupt-run", BX + ["accept", "r1", "--case", "*", "--reason", "ok"], expect=(2,), prep=results(lambda m: m.update(cases=[5])))
ACC = lambda d: cli(["baseline", "--config", "harness.toml", "accept", "r2", "--reason", "first"], d)
t("baseline-accept-empty-reason", BX + ["accept", "r1", "--case", "*", "--reason", ""], expect=(0, 2), prep=ACC)
t("baseline-accept-nomatch", BX + ["accept", "r1", "--case", "zzz*", "--reason", "x"], says="zzz", prep=ACC)
t("baseline-accept-surrogate-reason", BX + ["accept", "r1", "--case", "*", "--reason", "\udcff"], expect=(0, 2))
t("golden-accept-corrupt", ["golden", "accept", "reports/r1"], expect=(2,), prep=results(lambda m: m.update(cases=[5])))
t("golden-accept-missing", ["golden", "accept", "reports/nope"], says="nope")
t("merge-missing", ["merge", "--config", "harness.toml", "nope"], says="storage")
t("merge-corrupt-shard", ["merge", "--config", "harness.toml", "r1"], expect=(0, 1, 2), prep=results(lambda m: m.update(shard={"index": "x", "count": [1]})))
t("upload-pending-corrupt-spool", ["upload", "--config", "harness.toml", "--pending"], expect=(0, 2), prep=raw("reports/.pending/x.json", "{bad"))
t("upload-no-storage", ["upload", "--config", "harness.toml", "r1"], says="storage")
t("schedule-once-bad-cron", ["schedule", "--config", "harness.toml", "--once", "--cron", "61 * * * *"], says="cron")
t("schedule-bad-tz", ["schedule", "--config", "harness.toml", "--tz", "Mars/Olympus"], says="Mars")
t("init-existing", ["init", "."], expect=(0, 2))
t("init-file", ["init", "harness.toml"], says="harness.toml")
t("schema-out-file", ["schema", "--out", "harness.toml"], says="harness.toml")
t("judges-out-file", ["judges", "--config", "harness.toml", "--out", "harness.toml"], says="harness.toml")

only = sys.argv[1:]
for name, argv, expect, says, prep, desc, exp, env, agree in T:
    if only and not any(o in name for o in only):
        continue
    d = BASE / ("x-" + name)
    if d.exists(): shutil.rmtree(d)
    shutil.copytree(base, d, symlinks=True)
    if prep: prep(d)
    c = cli(argv, d, env, timeout=150)
    judge("cli:" + name, desc, exp, c[0], c[1], c[2], expect, says)
dump(BASE / "rows3.json")
