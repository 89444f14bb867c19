"""The entity kind of ``harness judges``' mutations (mutate.py): the names in an answer and in
its document (proper words, title lines, acronyms and codes), and the two mutators that swap
one for another of the same shape or replace it with another name the document holds.
Pure text functions, deterministic: randomness comes only from the ``random.Random`` given."""

from __future__ import annotations

import random
import re
from typing import Iterable

from harness.judges.mutate import ANTONYMS, NUMBER_WORDS, Result, _sentence_spans


_CAP = r"(?:[A-Z][\w'’-]*[a-z0-9][\w'’-]*|[A-Z]{2,}[\w-]*)"
_NAME = re.compile(rf"\b{_CAP}(?:\s+(?:of\s+|de\s+|the\s+)?{_CAP})*(?:\s+\d+)?")
_STOP_NAMES = {"The", "A", "An", "In", "On", "At", "For", "With", "From", "By", "After", "Before", "It", "This",
               "That", "These", "Those", "They", "We", "I", "You", "He", "She", "Its", "Their", "Our", "Some", "When",
               "If", "But", "And", "Or", "So", "As", "Also", "Students", "Teenagers", "Exposed", "New", "Later",
               "Starting", "According", "Replace", "Eligible", "Estimated", "Initial", "Cheaper", "Cold", "Source",
               "Summary", "Your", "Key", "Most", "More", "Less", "Only", "All", "Each", "Every", "No", "Not", "Yes",
               "Coated", "Sodium", "Schools", "Researchers", "Bees", "Colonies", "Sleep", "Later", "Text", "Patients",
               "Here", "There", "Both", "One", "Two", "Three", "What", "How", "Why", "Who", "Which", "Where",
               "Under", "Over", "About", "Around", "Between", "Despite", "While", "During", "Up", "Down",
               "Within", "People", "Celsius", "X-ray"}


_MONTHS_DAYS = {"January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
_FUNCTION = {"a", "an", "the", "of", "and", "or", "in", "on", "at", "for", "to", "by", "with", "from", "de", "vs"}
_COORDINATED = re.compile(r"^\s*(?:\([^)]*\)\s*)?(?:,|and|or|&|, and|, or|/)\s*(?:the\s+)?$", re.IGNORECASE)


def heading_line(line: str) -> bool:
    """A title-case line (a headline, a section heading): most of its words capitalised and no
    full stop at its end. Its capitals say nothing about which words are names."""
    words = [w for w in re.findall(r"[A-Za-z][\w'’-]*", line) if w.lower() not in _FUNCTION]
    if len(words) < 1 or line.rstrip().endswith((".", "?", "!")) and len(words) > 3:
        return False
    caps = sum(1 for w in words if w[0].isupper())
    return caps / len(words) >= 0.7 and (len(words) <= 12)


def _code(name: str) -> bool:
    """A code or identifier (``MCF-1187``, ``HR-114``, ``PM2.5``): one token holding a digit."""
    return " " not in name and any(ch.isdigit() for ch in name)


def _acronym(name: str) -> bool:
    """A short all-capitals word without digits (``SMS``, ``GPS``, ``VPN``): a term, not a name."""
    return " " not in name and name.isalpha() and name.isupper() and len(name) <= 4


def names_in(text: str, proper: set[str] | None = None) -> list[re.Match]:
    """Names in ``text``: people, places, organisations, products (a capitalised word not at a
    sentence start, a multiword proper noun, or a word the document itself capitalises
    mid-sentence, ``proper``). Not names: a single capitalised word at a sentence or line start
    the document does not capitalise mid-sentence ('Cycling', 'Methods:'), months and weekdays
    (dates belong to the number kind), short acronyms of terms (SMS, GPS)."""
    out = []
    starts = {s for s, _ in _sentence_spans(text)} | {0}
    for m in _NAME.finditer(text):
        words = m.group().split()
        while words and (words[0] in _STOP_NAMES or words[0].lower() in _FUNCTION):
            words = words[1:]
        if not words or not words[0][:1].isupper():
            continue
        if any(w.strip("'’s,") in _MONTHS_DAYS or w in _MONTHS_DAYS for w in words):
            continue
        name = " ".join(words)
        start = m.start() + m.group().index(name)
        at_start = start in starts or text[max(0, start - 2):start] in ("- ", ": ") or start == 0
        if len(words) == 1 and at_start and not (proper and name.removesuffix("'s").removesuffix("’s") in proper):
            continue
        if at_start and text[start + len(name):start + len(name) + 1] == ":":
            continue  # a label ("Methods: 1,860 patients..."), not a name the answer states a fact of
        if name.lower() in ANTONYMS or name.lower() in NUMBER_WORDS or _acronym(name):
            continue
        out.append(_Span(name, start))
    return out


class _Span:
    """A found name (``group()``, ``start()``, ``end()`` like a match)."""

    def __init__(self, name: str, start: int):
        self._name, self._start = name, start

    def group(self) -> str:
        return self._name

    def start(self) -> int:
        return self._start

    def end(self) -> int:
        return self._start + len(self._name)


def proper_words(document: str) -> set[str]:
    """Words the document capitalises in the middle of a sentence (proper nouns), outside its
    headings, and never writes in lower case ('Revenue' of a heading is not a name)."""
    out = set()
    lower = {w for w in re.findall(r"\b[a-z][\w-]*", document)}
    for line in document.splitlines():
        if heading_line(line):
            continue
        for m in re.finditer(r"(?<=[a-z,;] )([A-Z][a-z][\w-]*)", line):
            word = m.group(1)
            if word.lower() not in lower and word not in _MONTHS_DAYS:
                out.add(word)
    return out


def document_names(document: str) -> list[str]:
    """Multi-word or mid-sentence capitalised names of a document (headings left out),
    first-seen order, unique."""
    proper = proper_words(document)
    seen: dict[str, None] = {}
    for line in document.splitlines():
        if heading_line(line):
            continue
        for m in names_in(line, proper):
            name = m.group()
            if len(name) >= 3 and name not in seen:
                seen[name] = None
    return list(seen)


def _same_shape(a: str, b: str) -> bool:
    """Codes trade places with codes, names with names."""
    return _code(a) == _code(b)


def entity_swap(text: str, r: random.Random, proper: set[str] | None = None) -> "Result":
    """Swap two different names within the answer (not a coordinated pair, not a code with a name)."""
    found = names_in(text, proper)
    distinct = []
    for m in found:
        if all(m.group() != d.group() and m.group() not in d.group() and d.group() not in m.group() for d in distinct):
            distinct.append(m)
    # two names of one kind in different roles: a coordinated pair ("A and B funded it") says
    # the same thing in either order, and a code trading places with a name is not a claim
    pairs = [(a, b) for i, a in enumerate(distinct) for b in distinct[i + 1:]
             if _same_shape(a.group(), b.group()) and not _COORDINATED.match(text[a.end():b.start()])]
    if not pairs:
        return None
    a, b = r.choice(pairs)
    out = text[:a.start()] + b.group() + text[a.end():b.start()] + a.group() + text[b.end():]
    return out, f"swap: {a.group()!r} <-> {b.group()!r}"


def head_names(document: str) -> set[str]:
    """Names of the document's first two lines (its title and the line under it: "AirNest 400 ...
    / Model AN-400, manual version 2.1"): what the document is about, often under two names."""
    lines = [x for x in document.splitlines() if x.strip()][:2]
    return {m.group() for x in lines for m in names_in(x)}


def entity_replace(text: str, r: random.Random, document_names_: Iterable[str],
                   proper: set[str] | None = None, aliases: set[str] = frozenset()) -> "Result":
    """Replace one name with another name from the same document; never one name of the
    document's subject with another (``aliases``: "AirNest 400" and its "Model AN-400" are one
    purifier, and a reply may use either)."""
    found = names_in(text, proper)
    if not found:
        return None
    m = r.choice(found)

    def alias(n: str) -> bool:  # a product and its model number, both in the title lines
        return (any(ch.isdigit() for ch in n + m.group()) and any(n in a or a in n for a in aliases)
                and any(m.group() in a or a in m.group() for a in aliases))

    others = [n for n in document_names_ if n not in text and m.group() not in n and n not in m.group()
              and _same_shape(n, m.group()) and not _acronym(n) and not alias(n)]
    if not others:
        return None
    # prefer a name of the same shape (one word for one word, several for several)
    same = [n for n in others if (len(n.split()) > 1) == (len(m.group().split()) > 1)]
    new = r.choice(same or others)
    return text[:m.start()] + new + text[m.end():], f"replace: {m.group()!r} -> {new!r}"
