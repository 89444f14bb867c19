"""Judge health: the configured critic scored on a hand-labelled set, every run that uses it.

``golden/critic/*.yaml`` hold ``examples: [{reply, source | source_text, verdict, note}]``:
a reply (usually one claim), the document it is about (a file in fixtures/documents, or
inline text), and whether the document supports it. The critic's factuality verdict on
each is compared with the label: accuracy and Cohen's kappa, with the confusion counts,
are reported beside the results, so a weak or drifting judge shows the night it changes.

Two accuracies: ``accuracy`` over the decided examples only, and ``accuracy_all`` over every
example with an undecided (or unavailable) verdict counted as wrong, so a judge cannot look
good by abstaining. ``kappa`` is over the decided examples; ``kappa_all`` counts an undecided
verdict as the wrong label. ``python -m harness.models.critic_health`` prints the figures of
the configured offline critic on ``golden/critic``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from harness.errors import FixtureError, FixtureErrors
from harness.schema.files import InputProblem
from harness.schema.yamlload import load_file as load_yaml, strip_lines

EXAMPLE_KEYS = {"reply", "source", "source_text", "verdict", "note"}


@dataclass(frozen=True)
class LabelledExample:
    reply: str
    source: str
    """A document file name (fixtures/documents) or '' when ``source_text`` is inline."""
    source_text: str
    verdict: bool
    note: str = ""
    file: str = ""


@dataclass
class Agreement:
    """Confusion counts of critic verdicts against labels (positive = supported)."""

    tp: int = 0
    tn: int = 0
    fp: int = 0
    fn: int = 0
    undecided: int = 0
    """The critic gave no verdict (undecided or unavailable): wrong in accuracy_all / kappa_all,
    left out of accuracy / kappa."""
    undecided_true: int = 0
    """Of the undecided, how many were labelled true (the rest were labelled false)."""
    disagreements: list[str] = field(default_factory=list)

    @property
    def decided(self) -> int:
        return self.tp + self.tn + self.fp + self.fn

    @property
    def accuracy(self) -> float | None:
        return (self.tp + self.tn) / self.decided if self.decided else None

    @property
    def examples(self) -> int:
        return self.decided + self.undecided

    @property
    def accuracy_all(self) -> float | None:
        """Accuracy over every example, an undecided verdict counted as wrong."""
        return (self.tp + self.tn) / self.examples if self.examples else None

    @property
    def kappa(self) -> float | None:
        return cohen_kappa(self.tp, self.fp, self.fn, self.tn)

    @property
    def kappa_all(self) -> float | None:
        """Kappa over every example, an undecided verdict counted as the wrong label."""
        undecided_false = self.undecided - self.undecided_true
        return cohen_kappa(self.tp, self.fp + undecided_false, self.fn + self.undecided_true, self.tn)

    def as_dict(self) -> dict[str, Any]:
        acc, kappa, acc_all, kappa_all = self.accuracy, self.kappa, self.accuracy_all, self.kappa_all

        def r(x: float | None) -> float | None:
            return round(x, 4) if x is not None else None

        return {"examples": self.examples, "decided": self.decided, "undecided": self.undecided,
                "accuracy": r(acc), "accuracy_all": r(acc_all),
                "kappa": r(kappa), "kappa_all": r(kappa_all),
                "kappa_defined": kappa is not None,
                "counts": {"true_positive": self.tp, "true_negative": self.tn, "false_positive": self.fp,
                           "false_negative": self.fn},
                "disagreements": self.disagreements[:10]}


def cohen_kappa(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """Cohen's kappa of two binary raters; None when undefined (chance agreement is 1,
    e.g. both raters always said the same single label): never reported as 1.0."""
    n = tp + fp + fn + tn
    if n == 0:
        return None
    po = (tp + tn) / n
    yes_a, yes_b = (tp + fn) / n, (tp + fp) / n  # a: labels, b: critic
    pe = yes_a * yes_b + (1 - yes_a) * (1 - yes_b)
    if pe >= 1.0:
        return None
    return (po - pe) / (1 - pe)


def load_examples(directory: Path) -> list[LabelledExample]:
    """Every labelled example under ``directory``; FixtureErrors naming file and fix."""
    errors: list[FixtureError] = []
    out: list[LabelledExample] = []
    fix = "each example: {reply: '...', source: paper.pdf | source_text: '...', verdict: true|false, note: '...'}"
    for path in sorted(directory.glob("*.y*ml")) if directory.is_dir() else []:
        try:  # the suite's YAML loader: duplicate keys, alias bombs and deep nesting refused
            data = strip_lines(load_yaml(path))
        except InputProblem as exc:
            errors.append(FixtureError(exc.message, file=str(path), line=exc.line, fix=exc.fix or "correct the YAML"))
            continue
        items = data.get("examples") if isinstance(data, dict) else None
        if not isinstance(items, list) or not items:
            errors.append(FixtureError("a judge-health file holds examples: [...]", file=str(path), fix=fix))
            continue
        for i, raw in enumerate(items):
            if not isinstance(raw, dict) or set(raw) - EXAMPLE_KEYS:
                errors.append(FixtureError(f"examples[{i}] is not a table of {sorted(EXAMPLE_KEYS)}", file=str(path),
                                           fix=fix))
                continue
            reply, verdict = raw.get("reply"), raw.get("verdict")
            has_src, has_text = bool(raw.get("source")), bool(raw.get("source_text"))
            if not isinstance(reply, str) or not reply.strip() or not isinstance(verdict, bool) \
                    or has_src == has_text:
                errors.append(FixtureError(f"examples[{i}] needs reply, verdict true|false and exactly one of "
                                           "source / source_text", file=str(path), fix=fix))
                continue
            out.append(LabelledExample(reply=reply, source=str(raw.get("source") or ""),
                                       source_text=str(raw.get("source_text") or ""), verdict=verdict,
                                       note=str(raw.get("note") or ""), file=str(path)))
    if errors:
        raise FixtureErrors(errors)
    return out


#: Examples judged at once: their claims reach the embedder together and are encoded in
#: shared batches (``BatchingFront``), not one small batch per example.
CONCURRENT = 32


async def score_critic(critic, examples: list[LabelledExample], read_source: Callable[[str], str],
                       concurrent: int | None = None) -> Agreement:
    """Ask ``critic`` about every example (``concurrent`` at a time; default the critic's
    ``health_concurrency``, else ``CONCURRENT``); compare its verdicts with the labels, in the
    examples' order."""
    import asyncio

    gate = asyncio.Semaphore(max(1, concurrent or getattr(critic, "health_concurrency", CONCURRENT)))
    ahead = getattr(critic, "ahead", None)
    if ahead is not None:  # the offline critic: every example's texts in one request, encoded sorted by length
        pairs = []
        for ex in examples:
            try:
                pairs.append((ex.source_text or read_source(ex.source), ex.reply))
            except (OSError, ValueError):  # judge() reports it as before
                continue
        await ahead(factuality=pairs)

    async def judge(ex: LabelledExample):
        try:
            source = ex.source_text or read_source(ex.source)
        except OSError:
            return None
        async with gate:
            return await critic.factuality(source, ex.reply)

    judgements = await asyncio.gather(*(judge(ex) for ex in examples))
    agreement = Agreement()
    for ex, judgement in zip(examples, judgements):
        if judgement is None:
            agreement.undecided += 1
            agreement.undecided_true += ex.verdict
            agreement.disagreements.append(f"{ex.source}: source unreadable")
            continue
        verdicts = [c.supported for c in judgement.claims]
        if judgement.unavailable or not verdicts:
            said = None
        elif any(v is False for v in verdicts):
            said = False
        elif all(v is True for v in verdicts):
            said = True
        else:
            said = None
        if said is None:
            agreement.undecided += 1
            agreement.undecided_true += ex.verdict
            agreement.disagreements.append(f"undecided, labelled {str(ex.verdict).lower()}: {ex.reply[:80]!r}")
            continue
        if said and ex.verdict:
            agreement.tp += 1
        elif not said and not ex.verdict:
            agreement.tn += 1
        elif said:
            agreement.fp += 1
            agreement.disagreements.append(f"judged true, labelled false: {ex.reply[:80]!r}")
        else:
            agreement.fn += 1
            agreement.disagreements.append(f"judged false, labelled true: {ex.reply[:80]!r}")
    return agreement


def describe(critic_name: str, a: Agreement) -> str:
    """One line for summary.md / report.html."""
    if a.decided == 0:
        return f"critic health ({critic_name}): no verdicts on the {a.undecided} labelled examples"
    kappa = f"{a.kappa:.2f}" if a.kappa is not None else "undefined (the critic or the labels used one answer only)"
    return (f"critic health ({critic_name}): accuracy {a.accuracy_all:.2f} over all {a.examples} examples "
            f"(undecided counted wrong), {a.accuracy:.2f} over the {a.decided} decided; "
            f"Cohen's kappa {kappa}; TP {a.tp} TN {a.tn} FP {a.fp} FN {a.fn}; undecided {a.undecided}")


async def _main(argv: list[str] | None = None) -> int:
    """Score the offline critic (the real embedder) on golden/critic and print the figures."""
    import argparse
    import json

    from harness.models.claims import document_text
    from harness.models.critic_offline import OfflineCritic
    from harness.models.embedder import hash_embedder, minilm_embedder

    root = Path(__file__).resolve().parents[2]
    ap = argparse.ArgumentParser(prog="python -m harness.models.critic_health")
    ap.add_argument("--golden", default=str(root / "golden" / "critic"))
    ap.add_argument("--documents", default=str(root / "fixtures" / "documents"))
    ap.add_argument("--embedder", choices=("minilm", "hash"), default="minilm")
    ap.add_argument("-v", "--verbose", action="store_true", help="list every disagreement")
    args = ap.parse_args(argv)
    embedder = (minilm_embedder if args.embedder == "minilm" else hash_embedder)(root / ".harness-cache")
    critic = OfflineCritic(embedder)
    agreement = await score_critic(critic, load_examples(Path(args.golden)),
                                   lambda name: document_text(Path(args.documents) / name))
    await embedder.aclose()
    out = agreement.as_dict()
    shown = agreement.disagreements if args.verbose else out["disagreements"]
    out["disagreements"] = shown
    print(describe(critic.name, agreement))
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":  # pragma: no cover - a measuring tool
    import asyncio

    raise SystemExit(asyncio.run(_main()))
