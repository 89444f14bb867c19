"""Noise mode (DOCBOT_NOISE=1): make the offline model behave more like a real LLM.

A real provider paraphrases, varies its latency and is sometimes slow. With noise on, each
offline completion is delayed by a random jitter (and now and then by a slow spell), and
its text is paraphrased: synonyms swapped, a lead-in phrase added, summary sentences
reordered. Numbers, names and links are never touched, so the output stays grounded: a
suite that raises hard failures on this is too brittle, not catching a regression.
Randomness is real (not seeded) unless DOCBOT_NOISE_SEED is set.
"""

from __future__ import annotations

import asyncio
import os
import random
import re

SYNONYMS = {
    "shows": "indicates", "showed": "indicated", "found": "reported", "finds": "reports",
    "study": "research", "results": "findings", "significant": "notable", "increase": "rise",
    "decrease": "drop", "reduced": "lowered", "improved": "boosted", "participants": "subjects",
    "however": "but", "approximately": "about", "important": "key", "large": "big",
}
LEAD_INS = ("In short, ", "Overall, ", "Put simply, ", "In brief, ")
#: First words that lose their capital after a lead-in; any other word (a name) keeps it.
LOWER_AFTER_LEAD_IN = frozenset("""a an the this that these those it its in on at for with from by after before
during over under we our they their there here researchers students participants people most many
some all each every one two three four five six seven eight nine ten""".split())
SLOW_CHANCE = 0.07
SLOW_S = 1.2
JITTER_S = 0.25


def enabled() -> bool:
    return os.environ.get("DOCBOT_NOISE", "").strip() not in ("", "0", "false", "no")


def _rng() -> random.Random:
    seed = os.environ.get("DOCBOT_NOISE_SEED")
    return random.Random(int(seed)) if seed else random.Random()


async def delay(rng: random.Random | None = None) -> float:
    """Sleep a jittered latency, sometimes a slow spell; returns the seconds slept."""
    rng = rng or _rng()
    seconds = rng.uniform(0, JITTER_S) + (SLOW_S if rng.random() < SLOW_CHANCE else 0.0)
    await asyncio.sleep(seconds)
    return seconds


def paraphrase(text: str, rng: random.Random | None = None, limit: int | None = None) -> str:
    """A meaning-preserving variation of ``text``; the original when the variation would exceed ``limit``."""
    rng = rng or _rng()

    def swap(m: re.Match) -> str:
        word = m.group(0)
        repl = SYNONYMS.get(word.lower())
        if repl is None or rng.random() < 0.4:
            return word
        return repl.capitalize() if word[0].isupper() else repl

    lines = text.split("\n")
    body = [i for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith(("Source:", "#", "http"))]
    out = [re.sub(r"[A-Za-z]+", swap, line) if i in body else line for i, line in enumerate(lines)]
    if body and rng.random() < 0.5:
        first = body[0]
        line = out[first]
        prefix = "- " if line.startswith("- ") else ""
        core = line[len(prefix):]
        if core and core[0].isalpha() and not core[:2].isupper():
            word = re.match(r"\w+", core).group(0)
            # "In short, the study..." but "In short, Nordlys...": a name keeps its capital
            head = core[0].lower() if word.lower() in LOWER_AFTER_LEAD_IN else core[0]
            out[first] = prefix + rng.choice(LEAD_INS) + head + core[1:]
    result = "\n".join(out)
    sents = re.split(r"(?<=[.!?])\s+(?=[A-Z])", result)
    if "\n" not in result and len(sents) >= 3 and rng.random() < 0.3:
        sents[1], sents[2] = sents[2], sents[1]  # keep the lead sentence first
        result = " ".join(sents)
    if limit is not None and len(result) > limit:
        return text
    return result
