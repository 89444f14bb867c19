"""Wrong answers derived from right ones, by kind. Pure text functions, deterministic.

Each mutator takes a golden answer's text (and what it needs about the case) and returns
``(mutated_text, detail)`` or None when the kind does not apply to that text (no number to
change, no name to swap). A mutation always differs from its input; the detail says what
changed (``'34' -> '35'``). Randomness comes only from ``rng(seed, *parts)``: the same
suite and seed give the same mutations on every machine.

Kinds (``KINDS``): number, polarity, entity, omission, substitution, stale, format. The
suite-level kinds (substitution, stale) pick their texts in ``harness.judges.suite``; the
entity kind's names and mutators are in mutate_names.py.
"""

from __future__ import annotations

import hashlib
import random
import re
from typing import Iterable


KINDS = ("number", "polarity", "entity", "omission", "substitution", "stale", "format")

Result = "tuple[str, str] | None"


def rng(seed: int, *parts: object) -> random.Random:
    """A Random seeded by the seed and the parts (stable across processes, unlike hash())."""
    digest = hashlib.sha256("\x1f".join([str(seed), *map(str, parts)]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


# --- sentences --------------------------------------------------------------------------

_SENT_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(-])|\n+")


def sentences(text: str) -> list[str]:
    """Sentences and lines (a bullet line is one sentence), stripped, in order."""
    return [s.strip() for s in _SENT_END.split(text) if s and s.strip()]


def _sentence_spans(text: str) -> list[tuple[int, int]]:
    spans, start = [], 0
    for m in _SENT_END.finditer(text):
        if text[start:m.start()].strip():
            spans.append((start, m.start()))
        start = m.end()
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans


# --- number -----------------------------------------------------------------------------

NUMBER = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.,])\d+(?:\.\d+)?(?![\w])")
NUMBER_WORDS = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
_NUMBER_WORD = re.compile(r"\b(" + "|".join(NUMBER_WORDS) + r")\b", re.IGNORECASE)


def _fmt(value: float, like: str) -> str:
    decimals = len(like.split(".")[1]) if "." in like else 0
    text = f"{value:,.{decimals}f}" if "," in like or value >= 10000 and "," in like else f"{value:.{decimals}f}"
    return text


def _case_like(word: str, like: str) -> str:
    return word.capitalize() if like[:1].isupper() else word


def number_digit(text: str, r: random.Random) -> "Result":
    """Change one digit of one number (or a number word: 'two' -> 'three')."""
    found = list(NUMBER.finditer(text))
    if found:
        m = r.choice(found)
        token = m.group()
        positions = [i for i, ch in enumerate(token) if ch.isdigit()]
        i = positions[-1] if len(positions) == 1 or r.random() < 0.5 else r.choice(positions)
        old = int(token[i])
        new = (old + r.randint(1, 8)) % 10
        if i == 0 and new == 0 and len(positions) > 1:
            new = (old % 9) + 1
        mutated = token[:i] + str(new) + token[i + 1:]
        return text[:m.start()] + mutated + text[m.end():], f"digit: {token!r} -> {mutated!r}"
    words = list(_NUMBER_WORD.finditer(text))
    if words:
        m = r.choice(words)
        k = NUMBER_WORDS.index(m.group().lower())
        new = NUMBER_WORDS[(k + r.randint(1, 3)) % len(NUMBER_WORDS)]
        new = _case_like(new, m.group())
        return text[:m.start()] + new + text[m.end():], f"digit: {m.group()!r} -> {new!r}"
    return None


def number_scale(text: str, r: random.Random) -> "Result":
    """Scale one number by ten (or a number word doubled): 3,412 -> 34,120."""
    found = [m for m in NUMBER.finditer(text)]
    if not found:
        words = list(_NUMBER_WORD.finditer(text))
        if not words:
            return None
        m = r.choice(words)
        k = NUMBER_WORDS.index(m.group().lower())
        new = _case_like(NUMBER_WORDS[min(2 * (k + 1), 12) - 1] if k < 5 else NUMBER_WORDS[k // 2], m.group())
        if new.lower() == m.group().lower():
            return None
        return text[:m.start()] + new + text[m.end():], f"scale: {m.group()!r} -> {new!r}"
    m = r.choice(found)
    token = m.group()
    value = float(token.replace(",", ""))
    factor = 10 if r.random() < 0.5 or value < 10 else 0.5
    new_value = value * factor
    if "." not in token and new_value != int(new_value):
        new_value = int(new_value)
    plain = token.replace(",", "")
    decimals = len(plain.split(".")[1]) if "." in plain else 0
    new = f"{new_value:,.{decimals}f}" if "," in token else f"{new_value:.{decimals}f}"
    if new == token:
        return None
    return text[:m.start()] + new + text[m.end():], f"scale: {token!r} -> {new!r} (x{factor:g})"


def number_swap(text: str, r: random.Random) -> "Result":
    """Swap two different numbers within one sentence."""
    candidates = []
    for start, end in _sentence_spans(text):
        nums = [m for m in NUMBER.finditer(text, start, end)]
        pairs = [(a, b) for i, a in enumerate(nums) for b in nums[i + 1:] if a.group() != b.group()]
        candidates.extend(pairs)
    if not candidates:
        return None
    a, b = r.choice(candidates)
    out = text[:a.start()] + b.group() + text[a.end():b.start()] + a.group() + text[b.end():]
    return out, f"swap: {a.group()!r} <-> {b.group()!r}"


# --- polarity ---------------------------------------------------------------------------

# Direction words and antonyms, both ways. Whole words, case kept.
_ANTONYM_PAIRS = [
    ("increase", "decrease"), ("increased", "decreased"), ("increases", "decreases"),
    ("rose", "fell"), ("rise", "fall"), ("rises", "falls"), ("higher", "lower"), ("more", "fewer"),
    ("longer", "shorter"), ("kept", "lost"), ("keep", "lose"), ("gained", "lost"), ("up", "down"),
    ("better", "worse"), ("less", "more"), ("reduced", "raised"), ("reduce", "raise"), ("reduces", "raises"),
    ("cheaper", "dearer"), ("improved", "worsened"), ("improve", "worsen"), ("above", "below"),
    ("faster", "slower"), ("larger", "smaller"), ("lifts", "cuts"), ("lifted", "cut"),
    ("growth", "decline"), ("grew", "shrank"), ("grow", "shrink"), ("most", "fewest"), ("least", "most"),
    ("lowered", "raised"), ("cut", "raised"), ("earlier", "later"), ("later", "earlier"), ("early", "late"),
    ("late", "early"), ("less", "more"), ("protect", "endanger"), ("allowed", "forbidden"), ("may", "may not"),
    ("success", "failure"), ("successful", "unsuccessful"), ("safe", "unsafe"), ("easier", "harder"),
    ("harder", "easier"), ("unchanged", "changed"), ("dropped", "kept"), ("added", "removed"),
    ("gain", "loss"), ("positive", "negative"), ("strong", "weak"), ("stronger", "weaker"),
    ("high", "low"), ("low", "high"), ("hot", "cold"), ("warmer", "cooler"), ("cooler", "warmer"),
    ("sooner", "later"), ("extended", "shortened"), ("completed", "abandoned"), ("boost", "hurt"),
    ("boosted", "hurt"), ("helped", "hurt"), ("cheaper", "more expensive"), ("heavier", "lighter"),
    ("rising", "falling"), ("growing", "shrinking"), ("increasing", "decreasing"), ("stayed", "changed"),
]
ANTONYMS: dict[str, str] = {}
for _a, _b in _ANTONYM_PAIRS:
    ANTONYMS.setdefault(_a, _b)
    if " " not in _b:
        ANTONYMS.setdefault(_b, _a)
_ANTONYM_RE = re.compile(r"\b(" + "|".join(sorted(map(re.escape, ANTONYMS), key=len, reverse=True)) + r")\b",
                         re.IGNORECASE)
# an auxiliary a "not" after it negates ("are not easy"), not one before "only"/"also" ("there are
# not only 3,100 installers" says as much as before)
_AUX = re.compile(r"\b(is|are|was|were|can|will|would|could|should|has|have|had|does|did|must)\b(?! not\b)(?!n't)"
                  r"(?!\s+(?:only|also|just|even|still|about|around|nearly|almost|at least|more than)\b)")
_NEGATION = re.compile(r"\b(?:(is|are|was|were|can|will|would|could|should|has|have|had|does|did|do|must) not"
                       r"|(does|did|do|is|are|was|were|has|have|had)n't|no longer|never)\b", re.IGNORECASE)


_UP_DOWN_VERB = re.compile(r"\b(?:went|go|goes|gone|going|is|are|was|were|been|be|rose|moved|climbed|edged|ticked|"
                           r"shot|jumped|came|comes|come)\s+$", re.IGNORECASE)


def _flips_a_claim(text: str, m: re.Match) -> bool:
    """Whether flipping this word makes the claim false, not just odd: not part of a hyphenated
    compound ('after-school', 'low-cost' reads as a name), and 'up'/'down' only as a direction
    ('attendance went up', 'up 14 percent'), not a quantity ('up to three days') or a particle
    ('set up')."""
    if text[m.end():m.end() + 1] in ("-", "‑") or text[max(0, m.start() - 1):m.start()] in ("-", "‑"):
        return False
    word = m.group().lower()
    if word in ("up", "down"):
        after = text[m.end():m.end() + 12]
        if re.match(r"\s+to\b", after):
            return False
        return bool(_UP_DOWN_VERB.search(text[:m.start()]) or re.match(r"\s+(?:by\s+)?\d", after))
    return True


def polarity_flip(text: str, r: random.Random) -> "Result":
    """Flip one direction word or antonym: 'longer' -> 'shorter', 'kept' -> 'lost' (only where
    the flip makes the claim false: ``_flips_a_claim``)."""
    found = [m for m in _ANTONYM_RE.finditer(text) if _flips_a_claim(text, m)]
    if not found:
        return None
    m = r.choice(found)
    word = m.group()
    new = ANTONYMS[word.lower()]
    new = new.capitalize() if word[:1].isupper() else new
    return text[:m.start()] + new + text[m.end():], f"flip: {word!r} -> {new!r}"


def polarity_negation(text: str, r: random.Random) -> "Result":
    """Remove a negation if there is one, else add one after an auxiliary verb."""
    neg = list(_NEGATION.finditer(text))
    if neg:
        m = r.choice(neg)
        aux = m.group(1) or m.group(2)
        new = aux if aux else "still"
        return text[:m.start()] + new + text[m.end():], f"negation removed: {m.group()!r} -> {new!r}"
    found = list(_AUX.finditer(text))
    if not found:
        return None
    m = r.choice(found)
    return text[:m.end()] + " not" + text[m.end():], f"negation added: {m.group()!r} -> '{m.group()} not'"


# --- omission ---------------------------------------------------------------------------

def key_sentence_index(parts: list[str], keys: Iterable[str]) -> int:
    """Which part carries the key fact: the first holding a key string (case-insensitive),
    else the one with most numbers, else the first."""
    keys = [k.lower() for k in keys if k]
    for i, p in enumerate(parts):
        if any(k in p.lower() for k in keys):
            return i
    counts = [len(NUMBER.findall(p)) for p in parts]
    return counts.index(max(counts)) if counts and max(counts) > 0 else 0


def _key_parts(parts: list[str], tiers: "tuple[Iterable[str], ...]", restated: Iterable[str]) -> set[int]:
    """The parts to drop: the first part holding a key of the strongest tier that any part
    holds (of its keys, the one fewest parts hold), with every other part holding that key (a fact said twice is not omitted
    by dropping one of its sentences) and every part holding a ``restated`` marker; without
    a key, the part with most numbers (else the first)."""
    low = [p.lower() for p in parts]
    drop: set[int] = set()
    for tier in tiers:
        keys = [k.lower() for k in tier if k]
        first = next((p for p in low if any(k in p for k in keys)), None)
        if first is not None:  # of that part's keys, the one fewest parts hold (the most specific)
            key = min((k for k in keys if k in first), key=lambda k: sum(k in p for p in low))
            drop = {j for j, p in enumerate(low) if key in p}
            break
    if not drop:
        drop = {key_sentence_index(parts, ())}
    marks = [m.lower() for m in restated if m]
    drop |= {j for j, p in enumerate(low) if any(m in f" {p} " for m in marks)}
    return drop


def omission(text: str, keys: Iterable[str], *weaker: Iterable[str], restated: Iterable[str] = ()) -> "Result":
    """Drop the sentence (or bullet line) that carries the key fact; in a one-sentence answer,
    drop the clause that carries it.

    ``keys`` are the strings that carry the key fact; ``weaker`` are further tiers of keys, read
    only when no part holds a key of the tiers before (a case's contains strings before its
    regex alternatives before its rubric hints). Every part that repeats the chosen key goes
    too, and every part holding a ``restated`` marker (a refusal said again in other words):
    when nothing is left, the answer has no omission that makes it wrong (None)."""
    tiers = (list(keys), *(list(t) for t in weaker))
    restated = list(restated)
    parts = sentences(text)
    if len(parts) >= 2:
        drop = _key_parts(parts, tiers, restated)
        kept = [p for j, p in enumerate(parts) if j not in drop]
        if not kept:
            return None
        lines_mode = "\n" in text
        out = ("\n" if lines_mode else " ").join(kept)
        i = min(drop)
        more = f" (+{len(drop) - 1} repeating it)" if len(drop) > 1 else ""
        return out, f"dropped sentence {i + 1}/{len(parts)}{more}: {parts[i][:80]!r}"
    clauses = [c for c in re.split(r"(?<=[,;:])\s+|\s+(?=and\s|but\s|while\s|compared\s)", text) if c.strip()]
    if len(clauses) < 2:
        return None
    drop = _key_parts(clauses, tiers, restated)
    kept = [c for j, c in enumerate(clauses) if j not in drop]
    if not kept:
        return None
    out = " ".join(kept).strip(" ,;:")
    out = out[:1].upper() + out[1:]
    if not out.endswith((".", "!", "?")):
        out += "."
    if out == text:
        return None
    i = min(drop)
    more = f" (+{len(drop) - 1} repeating it)" if len(drop) > 1 else ""
    return out, f"dropped clause {i + 1}/{len(clauses)}{more}: {clauses[i][:80]!r}"


# --- format -----------------------------------------------------------------------------

BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+", re.MULTILINE)


def bullets_removed(text: str) -> "Result":
    """Bullet lines joined into one paragraph of prose."""
    if not BULLET.search(text):
        return None
    items = [BULLET.sub("", line).strip() for line in text.splitlines() if line.strip()]
    items = [i if i.endswith((".", "!", "?")) else i + "." for i in items]
    return " ".join(items), f"{len(items)} bullet lines joined into prose"


def too_long(text: str, limit: int, filler: list[str]) -> "Result":
    """The answer followed by more of the document's sentences until it passes ``limit`` chars."""
    out = text
    for s in filler * 10:
        if len(out) > limit:
            break
        out = f"{out} {s}"
    if len(out) <= limit:
        out = (out + " ") * (limit // max(1, len(out)) + 2)
        out = out.strip()
    return out, f"extended to {len(out)} chars (limit {limit})"
