"""Reading a request the way a person would: typos, capitals, stray accents, look-alike
letters, emoji and greetings do not change what was asked.

``request(text)`` runs before the request is parsed (logic.decide). It never touches
links, and it leaves foreign-language words alone, so a French or Spanish request is still
recognised as such. ``nearest(terms, universe)`` is the offline model's side of the same
courtesy: a question word the document does not contain is read as the document's closest
word (a typo of it).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

from . import language

# Cyrillic and Greek letters that look like Latin ones; folded only inside words that
# also hold Latin letters (a Russian word stays Russian).
LOOKALIKE = str.maketrans({
    "а": "a", "е": "e", "о": "o", "с": "c", "р": "p", "х": "x", "у": "y", "і": "i", "ј": "j", "ѕ": "s",
    "к": "k", "м": "m", "т": "t", "н": "h", "в": "b", "А": "A", "Е": "E", "О": "O", "С": "C", "Р": "P",
    "Х": "X", "У": "Y", "І": "I", "Т": "T", "Н": "H", "К": "K", "М": "M", "В": "B",
    "α": "a", "ο": "o", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
})

#: The words docbot's parser acts on (commands, platforms, audiences, formats, focuses,
#: question starters), beside language.ENGLISH.
COMMANDS = frozenset("""
summarize summarise summary summarized explain write make create draft post tweet thread
twitter linkedin facebook instagram whatsapp stop cancel shorter shorten retry again please
document paper article report file link bullet bullets points point list sentence takeaways
audience general public readers investors investor shareholders employees staff customers
buyers users experts scientists researchers specialists children child kids beginners
laypeople nonexperts year focus focusing emphasizing emphasising regarding challenges
limitations methods methodology findings results risks problems costs funding what which where
when does tell first second third last
""".split())
VOCAB = COMMANDS | language.ENGLISH
_FOREIGN = frozenset(w for words in language.FOREIGN.values() for w in words)
_TYPO_VOCAB = sorted(w for w in COMMANDS if len(w) >= 5)

_LINK = re.compile(r"\S*(?:://|www\.)\S*|\S+\.(?:pdf|html?|txt|docx?)\b|\{[^}]*\}\S*", re.I)
_WORD = re.compile(r"[^\W\d_]+", re.U)
_GREETING = re.compile(
    r"^(?:(?:hi|hello|hey|good (?:morning|afternoon|evening))(?: there)?[,!.]*\s+"
    r"(?:hope you(?:'re| are) (?:well|doing well)[,!.]*\s+)?)", re.I)
_REPEATED = re.compile(r"([!?.])\1+")
#: Longer texts are pastes, not requests: only the cheap steps apply.
MAX_WORDS_FIXED = 300


def one_typo(a: str, b: str) -> bool:
    """Is ``a`` one typo away from ``b``: two neighbours swapped, or one letter dropped,
    added or replaced (Damerau's single edit)?"""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b)) if x != y]
        return len(diff) == 1 or (len(diff) == 2 and diff[1] == diff[0] + 1
                                  and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]])
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = next((k for k, (x, y) in enumerate(zip(short, long_)) if x != y), len(short))
    return short[i:] == long_[i + 1:]


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The first candidate one typo away from ``word`` (words of five letters or more)."""
    if len(word) < 5:
        return None
    return next((c for c in candidates if one_typo(word, c)), None)


def fold_accents(word: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKD", word) if not unicodedata.combining(ch))


def fold_lookalikes(word: str) -> str:
    latin = any("a" <= ch.lower() <= "z" for ch in word)
    other = any(ch.isalpha() and not ch.isascii() and ch.translate(LOOKALIKE) != ch for ch in word)
    return word.translate(LOOKALIKE) if latin and other else word


def fold_text(text: str) -> str:
    """Accents and look-alike letters folded in every word (for matching, never for display)."""
    return _WORD.sub(lambda m: fold_accents(fold_lookalikes(m.group())), text)


def _symbol(ch: str) -> bool:
    return unicodedata.category(ch) in ("So", "Sk", "Cs") or ch in "\ufe0f\u200d\u20e3"


def _fix_word(word: str, typos: bool) -> str:
    w = fold_lookalikes(word)
    low = w.lower()
    if low in VOCAB or low in _FOREIGN:
        return w
    folded = fold_accents(low)
    if folded != low and folded in VOCAB:
        return fold_accents(w)
    if typos and folded.isascii():  # one typo from a command word ("linked" is no "linkedin")
        close = closest(folded, _TYPO_VOCAB)
        if close:
            return close
    return w


def _outside_links(pattern: re.Pattern, change, text: str) -> str:
    """``pattern.sub(change, text)`` everywhere but inside links and placeholders."""
    spans = [m.span() for m in _LINK.finditer(text)]
    return pattern.sub(lambda m: m.group(0) if any(a <= m.start() < b for a, b in spans) else change(m), text)


def request(text: str) -> str:
    """The request as docbot should read it (links untouched); the text itself when nothing changes."""
    if not text or not text.strip():
        return text
    t = unicodedata.normalize("NFKC", text)
    bare = "".join(ch for ch in t if not _symbol(ch))
    if bare.strip():
        t = bare
    typos = len(t.split()) <= MAX_WORDS_FIXED
    t = _outside_links(_WORD, lambda m: _fix_word(m.group(), typos), t)
    t = _outside_links(_REPEATED, lambda m: m.group(1), t)
    t = "\n".join(re.sub(r"[ \t]{2,}", " ", line).strip() for line in t.strip().splitlines())
    rest = _GREETING.sub("", t, count=1)
    return rest if rest.strip() else t


def nearest(terms: Iterable[str], universe: Iterable[str]) -> set[str]:
    """Each term, or the universe's word it is one typo of when the term is not in it
    (accents and look-alike letters folded first)."""
    pool = set(universe)
    folded_pool = {fold_accents(u): u for u in pool}
    candidates = sorted(folded_pool)  # a fixed order: the first word one typo away wins
    out: set[str] = set()
    for term in terms:
        if term in pool:
            out.add(term)
            continue
        t = fold_accents(fold_lookalikes(term))
        if t in folded_pool:
            out.add(folded_pool[t])
            continue
        close = closest(t, candidates)  # "recycl" is no typo of "cycl"
        out.add(folded_pool[close] if close else term)
    return out
