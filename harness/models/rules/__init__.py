"""The offline critic's rules: one module per phenomenon, each rule a named check with its words beside it.

critic_offline.py aligns every claim sentence of a reply with its closest source sentences and
asks the rules, in ``ORDER``, what contradicts; the first rule that finds something decides
(unsupported, with its finding). A rule is a plain function registered with ``pair.rule``: its
docstring says what it claims, its vocabulary is module-level data beside it, and its module's
``TWINS`` table holds a wrong claim it must flag and a right twin it must pass for each of its
rules (tests/models/test_rules.py reads every table).

    text        tokens, stems, lemmas, synonyms, clauses, number uses: the shared reading
    pair        SourceIndex (the source read once), Pair (one claim and its aligned sentences), rule()
    dates       a day and month, a month and year, said together; years told as amounts
    numbers     numbers bound to what they count: moved, rescaled, swapped, the part for the whole
    units       the same number in another unit of its kind (minutes / hours)
    names       names and codes and the facts said of them
    roles       words, groups and titles trading places
    ranks       "the second largest" told as "the largest"
    directions  a number's direction word, a direction word said of the same thing as the source's opposite
    moves       the level a number moved to, a comparison against its own figures, "N times slower"
    antonyms    antonym pairs in the aligned clause, plain opposites (hot / cold)
    negation    negation parity by clause, negated words, qualities only ever denied
    modality    what the source only hedges told as a fact ("may reduce" / "reduces", "up to 40" / "40")
    refusals    "the document doesn't say X" (and "it does say X") against the source

The critic's version is derived from the rules (``version()``): their names and the text of
their modules, so a rule added, removed or changed is a new evaluator version, never a hand bump.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from harness.models.rules import (
    antonyms, dates, directions, modality, moves, names, negation, numbers, ranks, refusals, roles, units,
)
from harness.models.rules.pair import REGISTRY, Pair, Rule, SourceIndex, Twin, pair
from harness.models.rules.text import Finding

#: The rule modules, each with its TWINS table.
MODULES = (dates, numbers, units, names, roles, ranks, directions, moves, antonyms, negation, modality, refusals)

#: The order the critic asks the pair rules in (the first finding decides).
ORDER = (
    "date-together", "number-bound", "unit-of-kind", "name-in-sentence", "name-label", "name-facts",
    "code-owner", "words-trade-places", "titles-traded", "rank", "number-direction", "level-moved",
    "versus-own-figures", "opposite-word", "times-above-one", "antonym-in-clause", "negation-in-clause",
    "direction-of-thing", "negation-target", "only-negated", "hedge-asserted", "evidence-as-proof",
    "association-as-cause", "bare-number",
)
#: Rules about what the reply says of the document ("it doesn't say X"): asked before the pair rules.
REFUSAL_RULES = ("refusal-contradicted", "affirmed-absent")

_unordered = set(REGISTRY) - set(ORDER) - set(REFUSAL_RULES)
if _unordered or set(ORDER) - set(REGISTRY):  # pragma: no cover - a rule module out of step with ORDER
    raise RuntimeError(f"harness.models.rules: rules registered but not ordered {sorted(_unordered)}, "
                       f"ordered but not registered {sorted(set(ORDER) - set(REGISTRY))}")

#: The pair rules in the order the critic asks them.
RULES: tuple[Rule, ...] = tuple(REGISTRY[n] for n in ORDER)

#: The rules package's own version: bumped only when the way rules are asked changes (ORDER, Pair),
#: never for a rule (a rule's name and text are in the digest).
RULES_VERSION = 6


def first_finding(p: Pair) -> list[Finding]:
    """What the first rule (in ORDER) that finds something found; empty when none does."""
    for r in RULES:
        found = r(p)
        if found:
            return found
    return []


def version() -> str:
    """``6.<digest>``: RULES_VERSION and a digest of the sorted rule names and the text of every
    module of this package (a rule added, removed, reworded or given other words is a new version)."""
    h = hashlib.sha256()
    for name in sorted(REGISTRY):
        h.update(name.encode() + b"\0")
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes().replace(b"\r\n", b"\n"))
    return f"{RULES_VERSION}.{h.hexdigest()[:8]}"


__all__ = ["MODULES", "ORDER", "REFUSAL_RULES", "RULES", "Finding", "Pair", "Rule", "SourceIndex", "Twin",
           "first_finding", "pair", "version"]
