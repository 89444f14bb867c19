"""What every rule reads: the source, indexed once, and one claim paired with its aligned sentences.

- ``SourceIndex``: the source's sentences tokenised once, with where every number and name
  occurs; what a rule module reads off the whole source (its dates, what it negates) is made by
  that module on first use and kept with the index (``SourceIndex.memo``);
- ``Pair``: one claim sentence, its tokens and names, the source sentences the critic aligned it
  with (``aligned``) and the ones that say one of its amounts (``held``);
- ``rule(name, args)``: registers a check as a rule of the offline critic; ``args`` says what of
  the pair it reads, so the check keeps plain arguments and its tests can call it directly;
- ``Twin``: a wrong claim and its right twin for one rule over one source: the rule must flag the
  wrong one and pass the right one (every rule module keeps its twins in one ``TWINS`` table;
  tests/models/test_rules.py reads them all).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from harness.models import claims as C
from harness.models.rules.text import Finding, _num_kind, number_uses, NumberUse, stem, Tok, tokenize, word_keys


def initials(text: str) -> str:
    """The first letters of the text's words in a row (hyphenated parts apart; "and", "of" and
    "the" skipped), with a space at every sentence or clause break: "ebitda" for "earnings before
    interest, taxes, depreciation and amortisation"."""
    out = []
    for chunk in re.split(r"[.;:()\n]", text):
        words = [w for w in re.findall(r"[A-Za-z]+", chunk) if w.lower() not in ("and", "of", "the")]
        out.append("".join(w[0].lower() for w in words))
    return " " + " ".join(out)


class SourceIndex:
    """The source's sentences, tokenised once, with where every number and name occurs."""

    def __init__(self, sentences: list[str], names: set[str]):
        self.sentences = sentences
        self.toks = [tokenize(s) for s in sentences]
        self.uses = [number_uses(t) for t in self.toks]
        self.names = names
        self.stems = [{stem(t.low) for t in ts if t.kind == "word"} for ts in self.toks]
        #: every sentence's words under all their keys (stem, lemma, synonym group): what a refusal is checked against
        self.sentence_keys = [{key for t in ts if t.kind == "word" for part in t.low.split("-") for key in word_keys(part)}
                              for ts in self.toks]
        self.all_stems = set().union(*self.stems) if self.stems else set()
        self.all_keys = set().union(*self.sentence_keys) | self.all_stems
        self.lows = [{t.low for t in ts if t.kind == "word"} for ts in self.toks]
        self.codes = {t.low for ts in self.toks for t in ts if t.kind == "word" and any(c.isdigit() for c in t.low)}
        #: words the source also writes in lower case: common nouns, not names
        self.common = {t.text for ts in self.toks for t in ts if t.kind == "word" and t.text.islower()}
        text = "\n".join(sentences)
        #: the first letters of its words in a row, a space at every break (critic_offline._spelled_out)
        self.initials = initials(text)
        #: the names the document is about: in its title lines, or in three sentences or more (a claim
        #: may name them where its sentence says "the company"); any other name belongs to its own sentences
        self._head = set().union(*self.lows[:2]) if self.lows else set()
        self._memo: dict[str, object] = {}

    def memo(self, key: str, make: Callable[["SourceIndex"], object]):
        """What a rule module reads off the whole source (its dates, the words it negates): made
        by ``make`` on first use and kept with the index."""
        if key not in self._memo:
            self._memo[key] = make(self)
        return self._memo[key]

    def main_name(self, name: str) -> bool:
        return name in self._head or sum(1 for lw in self.lows if name in lw) >= 3

    def occurrences(self, value: str) -> list[tuple[int, NumberUse]]:
        return [(k, u) for k, uses in enumerate(self.uses) for u in uses if u.value == value]


@dataclass
class Pair:
    """One claim sentence and the source sentences it was aligned with: what a rule reads."""

    claim: str
    toks: list[Tok]
    #: the claim's names (capitalised words the source may hold), months left out; none in a headline
    names: set[str]
    index: SourceIndex
    #: the closest source sentences, closest first (critic_offline aligns them)
    aligned: list[int]
    #: other source sentences that say one of the claim's amounts: where a clause of a long claim comes from
    held: list[int]

    def texts(self, ks: list[int]) -> list[str]:
        return [self.index.sentences[k] for k in ks]


def pair(claim: str, index: SourceIndex, aligned: list[int]) -> Pair:
    """The claim paired with its aligned sentences: tokens, names (none in a headline, months left
    out) and the held sentences (up to four, not aligned, that say one of the claim's amounts)."""
    toks = tokenize(claim)
    names = set() if C.is_heading(claim) else C.names(claim, index.names)
    amounts = {u.value for u in number_uses(toks) if _num_kind(u.value) == "amount"}
    held = [k for k, uses in enumerate(index.uses) if k not in aligned and amounts & {u.value for u in uses}][:4]
    return Pair(claim, toks, names - set(C._MONTHS), index, list(aligned), held)


@dataclass(frozen=True)
class Rule:
    """A rule of the offline critic: a check and what of the pair it reads."""

    name: str
    check: Callable[..., list[Finding]]
    args: Callable[[Pair], tuple]

    @property
    def claims(self) -> str:
        """What the rule claims: its check's docstring, first paragraph."""
        return " ".join((self.check.__doc__ or "").split("\n\n")[0].split())

    def __call__(self, p: Pair) -> list[Finding]:
        out = self.check(*self.args(p))
        return [] if not out else out if isinstance(out, list) else [out]


#: Every rule, by name, in the order the modules registered them (rules/__init__.py orders them).
REGISTRY: dict[str, Rule] = {}


def rule(name: str, args: Callable[[Pair], tuple]):
    """Register the decorated check as the rule ``name``; ``args`` picks what it reads from a Pair.
    The check is returned unchanged."""
    def register(check):
        if name in REGISTRY:
            raise ValueError(f"rule {name!r} is registered twice")
        REGISTRY[name] = Rule(name, check, args)
        return check
    return register


@dataclass(frozen=True)
class Twin:
    """A wrong claim the rule must flag and its right twin it must pass, over one source.
    ``aligned``: the source sentences the pair is aligned with (indices, closest first); by
    default every sentence, ordered by the content words it shares with the claim."""

    rule: str
    source: str
    wrong: str
    right: str
    aligned: tuple[int, ...] | None = None
    note: str = field(default="", compare=False)
