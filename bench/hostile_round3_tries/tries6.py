import sys, pathlib; sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from lib import *
H = "layer: robustness\ncases:\n  - id: first\n    send: hi\n    expect: {replies: {min: 1}}\n"
T = [
 ("bad-utf8-in-second", (H + "  - id: second\n    send: \"caf\xe9\"\n    expect: {replies: {min: 1}}\n").encode("latin-1"), "case 'second'"),
 ("control-char-in-second", (H + "  - id: second\n    send: \"a\x07b\"\n    expect: {replies: {min: 1}}\n").encode(), "case 'second'"),
 ("tab-in-second", (H + "  - id: second\n\tsend: hi\n    expect: {replies: {min: 1}}\n").encode(), "case 'second'"),
 ("unclosed-quote-in-second", (H + "  - id: second\n    send: \"hi\n    expect: {replies: {min: 1}}\n").encode(), "case 'second'"),
 ("deep-in-second", (H + "  - id: second\n    send: hi\n    expect: {replies: " + "[" * 70 + "]" * 70 + "}\n").encode(), "case 'second'"),
 ("alias-bomb-in-second", (H + "  - id: second\n    send: hi\n    x: &a [a,a,a,a,a,a,a,a,a,a]\n" + "".join(f"    x{i}: &a{i} [{','.join(['*a' if i == 0 else f'*a{i-1}'] * 10)}]\n" for i in range(6)) + "    expect: {replies: {min: 1}}\n").encode(), "case 'second'"),
 ("quoted-cases-key", ('layer: robustness\n"cases":\n  - id: second\n    send: hi\n    send: ho\n    expect: {replies: {min: 1}}\n').encode(), "case 'second'"),
 ("id-int-schema", (H + "  - id: 5\n    send: 5\n    expect: {replies: {min: 1}}\n").encode(), "#2"),
 ("scalar-entry", (H + "  - just a string\n").encode(), "#2"),
 ("dup-key-in-turn-of-second", (H + "  - id: second\n    turns:\n      - send: hi\n        send: ho\n        expect: {replies: {min: 1}}\n").encode(), "case 'second'"),
 ("dup-id-in-second", (H + "  - id: second\n    id: third\n    send: hi\n    expect: {replies: {min: 1}}\n").encode(), "second"),
 ("dup-key-in-defaults", ("layer: robustness\ndefaults: {channel: telegram, channel: whatsapp}\ncases:\n  - id: second\n    send: hi\n    expect: {replies: {min: 1}}\n").encode(), "defaults"),
 ("variants-bad-in-second", (H + "  - id: second\n    send: hi\n    variants: {nope: 1}\n    expect: {replies: {min: 1}}\n").encode(), "case 'second'"),
]
for name, data, says in T:
    d = project("n-" + name, cases="layer: robustness\ncases: []\n")
    (d / "fixtures/robustness/echo.yaml").write_bytes(data)
    c = cli(["check", "--config", d / "harness.toml"], d)
    extra = ["names the wrong case 'first'"] if "case 'first'" in c[2] else []
    judge("name:" + name, name, f"exit 2 naming {says}", c[0], c[1], c[2], (2,), says, extra)
dump(BASE / "rows6.json")
