import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lib import *
MT = "layer: multiturn\ncases:\n  - id: conv\n    turns:\n      - send: hi\n        expect: {replies: {min: 1}}\n"
T = []
def t(name, files, expect=(2,), says=None, extra="", env=None, args=(), run=True):
    T.append((name, files, expect, says, extra, env, args, run))
t("id-collides-across-layers", {"fixtures/multiturn/a.yaml": MT.replace("conv", "echo-0")}, says="duplicate case id")
t("id-collides-with-variant", {"fixtures/multiturn/a.yaml": MT, "fixtures/robustness/v.yaml": "layer: robustness\ncases:\n  - id: conv--typos\n    send: hi\n    expect: {replies: {min: 1}}\n"}, extra='[robustness]\nvariants = "all"\n', says="conv--typos")
t("id-collides-two-files-same-layer", {"fixtures/robustness/b.yaml": echo_cases(1)}, says="duplicate case id")
t("id-collides-subfolder", {"fixtures/robustness/sub/b.yaml": echo_cases(1)}, says="duplicate case id")
t("variants-unknown-kind", {"fixtures/multiturn/a.yaml": MT}, extra='[robustness]\nvariants = ["typoz"]\n', says="typoz")
t("variants-number", {"fixtures/multiturn/a.yaml": MT}, extra='[robustness]\nvariants = 5\n', says="variants")
t("robustness-unknown-key", {}, extra='[robustness]\nnope = 1\n', says="nope")
t("env-robustness-variants", {"fixtures/multiturn/a.yaml": MT}, env={"HARNESS_ROBUSTNESS_VARIANTS": "bogus"}, says="HARNESS_ROBUSTNESS_VARIANTS")
t("source-with-missing-docs-dir", {"fixtures/reasoning/r.yaml": "layer: reasoning\ncases:\n  - id: r1\n    source: paper.pdf\n    send: hi\n    expect: {replies: {min: 1}}\n"}, expect=(0, 1, 2), extra="")
t("golden-dup-ids", {"golden/a.yaml": "id: echo-0\nanswers: [a]\n", "golden/b.yaml": "id: echo-0\nanswers: [b]\n"}, expect=(0, 1, 2))
t("golden-not-utf8", {"golden/echo-0.yaml": b"answers: [\xff]\n"}, says="UTF-8")
t("golden-scalar", {"golden/echo-0.yaml": "just text\n"}, expect=(0, 2))
t("golden-version-weird", {"golden/VERSION": "\x1b]0;x\x07\n"}, expect=(0, 2))
t("quarantine-list-top", {"fixtures/quarantine.yaml": "- id: echo-0\n"}, says="quarantine")
t("quarantine-upper-name", {"fixtures/QUARANTINE.yaml": "quarantine: []\n"}, expect=(0, 2))
t("layer-folder-is-file", {"fixtures/cost": "not a folder"}, expect=(0, 2))
t("yaml-named-folder-in-layer", {"fixtures/robustness/x.yaml/": ""}, says="folder")
t("yml-and-yaml-same-ids", {"fixtures/robustness/echo.yml": echo_cases(1)}, says="duplicate")
t("empty-yaml-file", {"fixtures/robustness/empty.yaml": ""}, says="empty.yaml")
t("fixtures-symlink-to-etc", {"fixtures/robustness/etc": "@/etc"}, expect=(0, 2))
for name, files, expect, says, extra, env, args, run in T:
    d = project("m-" + name, cases=echo_cases(2), extra=extra)
    for rel, content in files.items():
        p = d / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith("/"): p.mkdir(parents=True, exist_ok=True)
        elif isinstance(content, str) and content.startswith("@"): os.symlink(content[1:], p)
        elif isinstance(content, bytes): p.write_bytes(content)
        else: p.write_text(content)
    check_run("misc:" + name, d, name, "exit 2 naming file and fix, check = run", expect=expect, says=says, env=env, args=args, run=run)
dump(BASE / "rows7.json")
