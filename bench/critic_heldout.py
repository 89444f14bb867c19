"""The offline critic on a HELD-OUT labelled set (default golden/critic-heldout-2): out-of-sample accuracy.

    .venv/bin/python bench/critic_heldout.py
    .venv/bin/python bench/critic_heldout.py --set golden/critic-heldout

``--set DIR`` names the directory of labelled YAML files to score (relative paths are read from
the repo root); golden/critic-heldout-2 (the default) is the second, blind set written after the
first one had been used for tuning; golden/critic-heldout, the first, is a development set since
session 19 (rules were written with its failures in view), so its figures are not out of sample;
golden/critic-modality is the development set of the modality rules (written with them: in-sample).

golden/critic/*.yaml (240 examples) were used while tuning the critic, so its figures there
are in-sample. golden/critic-heldout-2 holds examples written by reading the documents before
the critic ever saw them; they must never be used for tuning. The critic is built the way
``harness judges`` builds it (harness/judges/run.py ``make_services``, harness.toml from the
repo root), scored with ``critic_health.score_critic``, and the script prints: examples,
accuracy_all (undecided counted wrong), accuracy_decided, kappa, undecided, accuracy per
note kind (first word of the note), and every wrong verdict with the critic's explanation.

``--out FILE`` also writes every example's verdict as JSON (source, reply, label, the critic's
reduced verdict and each claim's verdict and explanation), for bench/critic_compare.py to
diff two runs example by example (a refactor of the rules must leave every verdict as it was).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from harness.config import load_config  # noqa: E402
from harness.errors import FixtureError  # noqa: E402
from harness.judges.run import JudgeOptions, make_services  # noqa: E402
from harness.models.critic_health import load_examples, score_critic  # noqa: E402


class Recorder:
    """Passes factuality() through to the critic and keeps each judgement by reply."""

    def __init__(self, backend):
        self.backend = backend
        self.name = backend.name
        self.judgements: dict[tuple[str, str], object] = {}

    async def factuality(self, source: str, reply: str):
        j = await self.backend.factuality(source, reply)
        self.judgements[(source, reply)] = j
        return j


def said_of(judgement) -> bool | None:
    """The same reduction score_critic applies: any False -> False, all True -> True, else None."""
    verdicts = [c.supported for c in judgement.claims]
    if judgement.unavailable or not verdicts:
        return None
    if any(v is False for v in verdicts):
        return False
    if all(v is True for v in verdicts):
        return True
    return None


def kind_of(note: str) -> str:
    m = re.match(r"[a-z-]+", note.strip().lower())
    return m.group(0) if m else "(none)"


def fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


DEFAULT_SET = Path("golden") / "critic-heldout-2"


def set_dir(arg: str) -> Path:
    """The labelled-set directory named by --set: absolute, or relative to the repo root."""
    path = Path(arg).expanduser()
    return path if path.is_absolute() else ROOT / path


def read_set(directory: Path):
    """The examples of ``directory``, or a message naming the directory and the fix."""
    if not directory.is_dir():
        return None, (f"--set {directory}: not a directory; fix: name a directory of labelled YAML files "
                      f"such as {DEFAULT_SET}")
    try:
        examples = load_examples(directory)
    except FixtureError as exc:
        return None, exc.render()
    if not examples:
        return None, (f"--set {directory}: no *.yaml / *.yml file with examples in it; fix: name a directory "
                      f"of labelled YAML files such as {DEFAULT_SET}")
    return examples, ""


def per_example(examples, recorder, critic) -> dict:
    """Every example's verdict: what bench/critic_compare.py diffs between two runs."""
    rows = []
    for i, ex in enumerate(examples):
        source = ex.source_text or critic.source_text(ex.source)
        j = recorder.judgements.get((source, ex.reply))
        said = said_of(j) if j is not None else None
        rows.append({"id": f"{i}:{ex.source}", "source": ex.source, "reply": ex.reply, "label": ex.verdict,
                     "note": ex.note, "said": said,
                     "unavailable": (j.unavailable if j is not None else "no judgement") or "",
                     "claims": [{"claim": c.claim, "supported": c.supported, "explanation": c.explanation}
                                for c in (j.claims if j is not None else ())]})
    return {"critic": critic.name, "examples": rows}


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Score the offline critic on a held-out labelled set.")
    parser.add_argument("--set", dest="set_dir", default=str(DEFAULT_SET), metavar="DIR",
                        help=f"directory of labelled YAML files (default {DEFAULT_SET}; relative to the repo root)")
    parser.add_argument("--out", default=None, metavar="FILE",
                        help="also write every example's verdict and claims as JSON to FILE")
    args = parser.parse_args(argv)
    directory = set_dir(args.set_dir)
    examples, problem = read_set(directory)
    if examples is None:
        print(problem, file=sys.stderr)
        return 2
    os.chdir(ROOT)
    config = load_config(ROOT / "harness.toml")
    options = JudgeOptions(out=Path(tempfile.mkdtemp(prefix="critic-heldout-")))
    services = make_services(config, options)
    critic = services.get("critic")
    recorder = Recorder(critic.backend)
    try:
        agreement = await score_critic(recorder, examples, critic.source_text)
    finally:
        await services.aclose()

    print(f"set: {directory}")
    print(f"critic: {critic.name}")
    for note in options.notes:
        print(f"note: {note}")
    print(f"examples: {agreement.examples} (labelled true {sum(e.verdict for e in examples)}, "
          f"false {sum(not e.verdict for e in examples)})")
    print(f"accuracy_all (undecided counted wrong): {fmt(agreement.accuracy_all)}")
    print(f"accuracy_decided: {fmt(agreement.accuracy)} over {agreement.decided} decided")
    print(f"kappa (decided): {fmt(agreement.kappa)}   kappa_all: {fmt(agreement.kappa_all)}")
    print(f"undecided: {agreement.undecided}")
    print(f"counts: TP {agreement.tp} TN {agreement.tn} FP {agreement.fp} FN {agreement.fn}")

    if args.out:
        Path(args.out).write_text(json.dumps(per_example(examples, recorder, critic), indent=1), encoding="utf-8")
        print(f"per-example verdicts: {args.out}")

    per: dict[str, dict[str, int]] = defaultdict(lambda: {"n": 0, "right": 0, "undecided": 0, "true": 0})
    wrong = []
    for ex in examples:
        source = ex.source_text or critic.source_text(ex.source)
        j = recorder.judgements.get((source, ex.reply))
        said = said_of(j) if j is not None else None
        row = per[kind_of(ex.note)]
        row["n"] += 1
        row["true"] += ex.verdict
        if said is None:
            row["undecided"] += 1
        elif said == ex.verdict:
            row["right"] += 1
        if said != ex.verdict:
            wrong.append((ex, said, j))

    print("\naccuracy per note kind (undecided counted wrong):")
    print(f"  {'kind':20} {'n':>3} {'labelled true':>13} {'right':>5} {'undecided':>9} {'accuracy':>8}")
    for kind in sorted(per):
        r = per[kind]
        print(f"  {kind:20} {r['n']:>3} {r['true']:>13} {r['right']:>5} {r['undecided']:>9} "
              f"{r['right'] / r['n']:>8.2f}")

    print(f"\nwrong verdicts ({len(wrong)}):")
    for ex, said, j in wrong:
        said_s = "undecided" if said is None else str(said).lower()
        print(f"- [{ex.source}] label {str(ex.verdict).lower()}, critic {said_s} ({ex.note})")
        print(f"    reply: {ex.reply}")
        if j is None:
            print("    (no judgement)")
            continue
        if j.unavailable:
            print(f"    unavailable: {j.unavailable}")
        for c in j.claims:
            print(f"    claim {c.supported}: {c.claim!r}: {c.explanation}")
    return 0


if __name__ == "__main__":  # pragma: no cover - a measuring tool
    raise SystemExit(asyncio.run(main()))
