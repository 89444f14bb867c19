"""Two runs of the offline critic compared example by example: the same verdicts, or what moved.

    .venv/bin/python bench/critic_compare.py BEFORE AFTER [--blind]

BEFORE and AFTER are two files of the same kind:

- judges.json from ``harness judges --out DIR``: the catch rate per mutation kind, the goldens,
  critic health (counts), every mutation's ``caught_by``, every case's similarity thresholds and
  the golden failures are compared (meta: critic name, timings, cache counts, is not);
- per-example verdicts from ``bench/critic_heldout.py --out FILE``: each example's reduced verdict
  (true / false / undecided), its unavailable reason and every claim's verdict and explanation.

It prints every difference (or, with ``--blind``, only how many examples changed and which way
against their labels, never the examples themselves: a blind held-out set is scored, not read)
and exits 0 when the two runs agree to the example, 1 when they do not, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def load(path: str) -> dict:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: cannot read it as JSON ({exc}); fix: name a judges.json or a file written by "
                         f"bench/critic_heldout.py --out") from None


def kind_of(data: dict) -> str:
    if "examples" in data and isinstance(data["examples"], list):
        return "heldout"
    if "cases" in data and "kinds" in data:
        return "judges"
    return ""


def _case_key(c: dict) -> tuple[str, str, str]:
    return c.get("id", ""), c.get("kind", ""), c.get("mutation", "")


def diff_judges(a: dict, b: dict) -> list[str]:
    out = []
    for key in ("kinds", "goldens", "health_detail", "thresholds", "golden_failures"):
        if a.get(key) != b.get(key):
            if isinstance(a.get(key), dict) and isinstance(b.get(key), dict):
                for k in sorted(set(a[key]) | set(b[key])):
                    if a[key].get(k) != b[key].get(k):
                        out.append(f"{key}.{k}: {a[key].get(k)!r} -> {b[key].get(k)!r}")
            else:
                out.append(f"{key}: {a.get(key)!r} -> {b.get(key)!r}")
    ca = {}
    for c in a.get("cases", []):
        ca.setdefault(_case_key(c), []).append(sorted(c.get("caught_by", [])))
    cb = {}
    for c in b.get("cases", []):
        cb.setdefault(_case_key(c), []).append(sorted(c.get("caught_by", [])))
    for k in sorted(set(ca) | set(cb)):
        if ca.get(k) != cb.get(k):
            out.append(f"case {k[0]} [{k[1]}] {k[2][:90]}: caught by {ca.get(k)} -> {cb.get(k)}")
    return out


def _verdict(said) -> str:
    return "undecided" if said is None else str(said).lower()


def diff_heldout(a: dict, b: dict, blind: bool) -> list[str]:
    ea = {e["id"]: e for e in a["examples"]}
    eb = {e["id"]: e for e in b["examples"]}
    out, moves = [], {"right->wrong": 0, "wrong->right": 0, "wrong->wrong": 0, "explanation only": 0}
    if set(ea) != set(eb):
        out.append(f"the two runs scored different examples: {len(set(ea) - set(eb))} only before, "
                   f"{len(set(eb) - set(ea))} only after")
    for k in sorted(set(ea) & set(eb), key=lambda x: int(x.split(":")[0])):
        x, y = ea[k], eb[k]
        if (x["said"], x["unavailable"], x["claims"]) == (y["said"], y["unavailable"], y["claims"]):
            continue
        if x["said"] == y["said"]:
            moves["explanation only"] += 1
        elif x["said"] == x["label"]:
            moves["right->wrong"] += 1
        elif y["said"] == y["label"]:
            moves["wrong->right"] += 1
        else:
            moves["wrong->wrong"] += 1
        if blind:
            continue
        out.append(f"example {k} (label {_verdict(x['label'])}): {_verdict(x['said'])} -> {_verdict(y['said'])}")
        out.append(f"    reply: {x['reply'][:160]}")
        for cx, cy in zip(x["claims"], y["claims"]):
            if cx != cy:
                out.append(f"    claim {cx['claim'][:100]!r}: {cx['supported']} ({cx['explanation'][:120]})")
                out.append(f"       -> {cy['supported']} ({cy['explanation'][:120]})")
        if len(x["claims"]) != len(y["claims"]):
            out.append(f"    claims: {len(x['claims'])} -> {len(y['claims'])}")
    changed = sum(moves.values())
    if changed:
        out.append(f"{changed} of {len(ea)} examples changed: " + ", ".join(f"{n} {k}" for k, n in moves.items() if n))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Compare two runs of the offline critic example by example.")
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--blind", action="store_true",
                        help="print only how many examples changed and which way, never the examples")
    args = parser.parse_args(argv)
    a, b = load(args.before), load(args.after)
    kind = kind_of(a)
    if not kind or kind != kind_of(b):
        print(f"{args.before} and {args.after} are not two judges.json files nor two per-example files of "
              f"bench/critic_heldout.py --out", file=sys.stderr)
        return 2
    if kind == "judges":
        out = diff_judges(a, b)
        n = f"{len(a.get('cases', []))} mutations, goldens {a.get('goldens')}, health {a.get('health')}"
    else:
        out = diff_heldout(a, b, args.blind)
        n = f"{len(a['examples'])} examples"
    print(f"before: {args.before} ({a.get('critic') or a.get('meta', {}).get('critic')})")
    print(f"after:  {args.after} ({b.get('critic') or b.get('meta', {}).get('critic')})")
    for line in out:
        print(line)
    print(("identical: " if not out else "DIFFERENT: ") + n)
    return 0 if not out else 1


if __name__ == "__main__":  # pragma: no cover - a measuring tool
    raise SystemExit(main())
