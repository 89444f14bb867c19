import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lib import *
from ops_support import MotoS3, ACCESS_KEY, SECRET_KEY
import threading
s3 = MotoS3()
ENV = {"AWS_ACCESS_KEY_ID": ACCESS_KEY, "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_DEFAULT_REGION": "us-east-1"}
def proj(name, prefix="chatbot"):
    d = BASE / ("s-" + name)
    if d.exists(): shutil.rmtree(d)
    d.mkdir(parents=True)
    make_project(d, cases=echo_cases(2), storage=s3)
    cfg = d / "harness.toml"
    cfg.write_text(cfg.read_text().replace("/chatbot\"", f"/{prefix}\""))
    return d
def put_index(prefix, body):
    s3.client().put_object(Bucket=s3.bucket, Key=f"{prefix}/index.json", Body=body)
def runs(d, *ids):
    for r in ids:
        c = cli(["run", "--config", d / "harness.toml", "--quiet", "--no-upload", "--run-id", r], d, ENV)
        assert c[0] == 0, c
def chk(name, desc, exp, c, expect, says=None, extra=()):
    judge("storage:" + name, desc, exp, c[0], c[1], c[2], expect, says, list(extra))
SECRET_SEEN = lambda c: ["secret in output"] if SECRET_KEY in c[1] + c[2] else []

# 1 index wrong shapes: upload must refuse and keep the pending spool; nothing lost
for i, (label, body) in enumerate([("runs-dict", b'{"runs": {}}'), ("runs-ints", b'{"runs": [1]}'),
                                   ("deep", b'[' * 100000 + b']' * 100000), ("non-utf8", b'\xff\xfe{"runs": []}'),
                                   ("html", b"<html>portal</html>"), ("empty", b""), ("null", b"null")]):
    p = f"idx{i}"
    d = proj("index-" + label, p)
    runs(d, "r1")
    put_index(p, body)
    c = cli(["upload", "--config", d / "harness.toml", "r1"], d, ENV)
    after = s3.client().get_object(Bucket=s3.bucket, Key=f"{p}/index.json")["Body"].read()
    chk(f"index-{label}", f"index.json = {body[:30]!r}, then `harness upload r1`", "refused, index untouched, run kept pending", c, (2, 1, 0),
        extra=(["index overwritten"] if after != body else []) + SECRET_SEEN(c))
    h = cli(["history", "--config", d / "harness.toml"], d, ENV)
    chk(f"index-{label}-history", f"index.json = {body[:30]!r}, then `harness history`", "local runs listed, remote problem said", h, (0,))
# 2 index entries with odd fields
p = "odd"
d = proj("index-odd-entries", p)
runs(d, "r1")
put_index(p, json.dumps({"schema": "harness.index/1", "runs": [{"run_id": 5, "prefix": "x"}, {"run_id": "../../etc", "prefix": "../../etc"},
                                                                {"run_id": "r0", "prefix": None}, {"run_id": "rz", "prefix": "odd/runs/2026/01/01/rz", "started_at": 5, "summary": "x"}]}).encode())
for cmd in (["history"], ["diff"], ["upload", "r1"], ["baseline", "show"]):
    c = cli([cmd[0], "--config", d / "harness.toml", *cmd[1:]], d, ENV)
    chk("odd-entries-" + cmd[0], f"index entries with int run_id, '../../etc', null prefix, summary text; `harness {' '.join(cmd)}`", "no crash; odd entries left out", c, (0, 1, 2))
# 3 two uploaders at once
p = "race"
d = proj("race", p)
ids = [f"r{i}" for i in range(6)]
runs(d, *ids)
results = []
def up(r):
    results.append(cli(["upload", "--config", d / "harness.toml", r], d, ENV))
ths = [threading.Thread(target=up, args=(r,)) for r in ids]
[t.start() for t in ths]; [t.join() for t in ths]
idx = json.loads(s3.client().get_object(Bucket=s3.bucket, Key=f"{p}/index.json")["Body"].read())
listed = sorted(e["run_id"] for e in idx["runs"])
codes = [r[0] for r in results]
why = [] if listed == ids else [f"index lists {listed}, not {ids}"]
judge("storage:six-uploaders-at-once", "six `harness upload` processes at once, one run each", "index lists all six", codes[0] if all(c == 0 for c in codes) else codes, "", "", expect=None, extra_why=why + [f"exit {c}" for c in codes if c != 0])
# 4 odd prefixes
for label, prefix in [("unicode", "nächtlich"), ("plus", "a+b"), ("percent", "a%2Fb"), ("space", "a b"), ("tilde", "~x"), ("long", "p" * 900)]:
    d = proj("prefix-" + label, prefix)
    c1 = cli(["check", "--config", d / "harness.toml"], d, ENV)
    c2 = cli(["run", "--config", d / "harness.toml", "--quiet", "--run-id", "r1"], d, ENV)
    keys = [k for k in s3.keys() if "r1/results.json" in k]
    h = cli(["history", "--config", d / "harness.toml"], d, ENV)
    extra = [f"check {c1[0]} vs run {c2[0]}"] if (c1[0] == 2) != (c2[0] == 2) else []
    chk("prefix-" + label, f"[storage] url = s3://bucket/{prefix[:30]}", "refused by check and run, or stored and listed", c2, (0, 2), extra=extra + SECRET_SEEN(c2))
dump(BASE / "rows4.json")
s3.stop()
