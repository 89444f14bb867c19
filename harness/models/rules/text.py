"""The shared reading of every rule: tokens, stems, lemmas, plain synonyms, clauses, number uses.

Nothing here decides anything: these are the words (stop words, relational words, scales,
percent words, negation cues, light verbs, words about the document) and the readings
(``tokenize``, ``context`` windows, ``number_uses``, ``clauses``) the rule modules share.

The readings of a word or a text depend on nothing else: ``stem``, ``lemma``, ``word_keys`` and
``tokenize`` are memoized by their argument (``MEMO`` entries each; tokens are frozen, and
``tokenize`` hands every caller its own list), since the rules read the same source sentences
for every claim and every pair of direction words.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from harness.models import claims as C


_TOKEN = re.compile(
    r"\d{1,2}:\d{2}"                                   # a clock time, one token
    r"|[A-Z][A-Za-z]*(?:-[A-Za-z]*\d+[A-Za-z\d]*)+(?![\w])"  # a code: HF-2021-0457, AN-F40 (one word)
    r"|[A-Za-z]+\d+(?:\.\d+)?[A-Za-z\d]*(?![\w])"        # a code: Q3, CO2, PM2.5 (a word, not a number)
    r"|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"      # numbers
    r"|[^\W\d_](?:[^\W\d_]|['’])*(?:-[^\W\d_]+)*"     # words in any alphabet (hyphenated kept whole)
    r"|%|[;:()]|[.,!?]")


_STOP = {
    "the", "a", "an", "of", "in", "on", "at", "for", "by", "and", "or", "is", "are", "was", "were", "be", "been",
    "it", "its", "this", "that", "these", "those", "with", "as", "which", "who", "whom", "their", "they", "them",
    "there", "has", "have", "had", "will", "would", "can", "could", "should", "may", "might", "about", "into",
    "per", "each", "every", "some", "such", "also", "only", "just", "very", "so", "than", "then", "we", "our",
    "he", "she", "his", "her", "you", "your", "i", "do", "does", "did", "not", "no", "but", "while", "whereas",
    "said", "says", "say", "all", "both", "any", "one", "new", "s", "around", "roughly", "almost", "nearly",
    "average", "on", "if", "when", "where", "what", "how",
}


#: Function words that carry order or comparison: kept as context features.
_RELATIONAL = {"from", "to", "than", "against", "before", "after", "between", "versus", "vs", "compared",
               "above", "below", "over", "under", "up", "down"}


_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12, "bn": 1e9, "m": 1e6, "k": 1e3}


_PERCENT = {"percent", "per", "%", "percentage", "pc"}


_RANGE_JOIN = {"to", "and", "or", "-", "–", "through"}


_NEG_CUES = {"not", "no", "never", "none", "neither", "nor", "cannot", "without", "nobody", "nothing", "unable",
             "isn't", "wasn't", "weren't", "aren't", "didn't", "doesn't", "don't", "can't", "won't", "hasn't",
             "haven't", "hadn't", "couldn't", "wouldn't", "shouldn't", "isn’t", "wasn’t", "didn’t", "doesn’t",
             "don’t", "can’t", "won’t"}


_CLAUSE_SPLIT = re.compile(r"\s*(?:[;:,]|\b(?:but|while|whereas|although|compared with|against)\b|\band\s+(?=(?:said|says|"
                           r"would|will|is|was|were|are|has|had|have|did|does|do|can|could|may|might|must|should|made|make|makes|felt|"
                           r"feel|feels|became|become|got|gets|it|they|their|its|the|only)\b|\d))\s*", re.I)


#: Entries kept by each memoized reading (a word or a sentence each: a few hundred bytes).
MEMO = 1 << 16


@functools.lru_cache(maxsize=MEMO)
def stem(word: str) -> str:
    w = word.lower().strip("'’")
    w = w.removesuffix("'s").removesuffix("’s")
    return w[:5] if len(w) > 5 else w


#: Irregular forms, to their base word: "rising prices" where the source says "prices rose".
_IRREGULAR = {"rose": "rise", "risen": "rise", "rising": "rise", "fell": "fall", "fallen": "fall", "grew": "grow",
              "grown": "grow", "found": "find", "made": "make", "came": "come", "kept": "keep", "lost": "lose",
              "held": "hold", "left": "leave", "took": "take", "taken": "take", "gave": "give", "given": "give",
              "got": "get", "went": "go", "gone": "go", "ran": "run", "sold": "sell", "bought": "buy",
              "brought": "bring", "built": "build", "spent": "spend", "paid": "pay", "met": "meet", "put": "put",
              "shown": "show", "drove": "drive", "driven": "drive", "slept": "sleep", "began": "begin",
              "begun": "begin", "stood": "stand", "led": "lead", "fewer": "few", "less": "little",
              "worse": "bad", "better": "good", "hidden": "hide", "shrank": "shrink", "shrunk": "shrink"}


#: Words a summary uses for the source's words: the same thing said plainly ("open risks" for
#: "remaining obstacles", "patchy networks" for "network outages"). Used only to decide whether
#: a claim speaks of something the source never does, never to read direction or polarity.
_SYNONYMS = [frozenset(g.split()) for g in (
    "risk obstacle challenge problem issue hurdle barrier difficulty drawback limitation weakness concern snag "
    "difficult hard struggle outage",
    "same unchanged stay remain similar steady stable flat change differ vary",
    "open remain outstanding unsolved unresolved pending",
    "hidden hide unmapped unknown undiscovered uncharted undetected",
    "find recruit hire employ staff",
    "cause lead result drive trigger because due owing",
    "low poor weak limited little patchy spotty unreliable outage",
    "literacy literate illiterate read reading",
    "work effective effect helped help succeed success worked",
    "come attend attendance",
    "scale large big batch mass industrial commercial production",
    "push raise increase add lift boost",
    "adapt adjust change renegotiate",
    "late later delay delayed",
    "child children kid kids young",
    "medicine medication drug tablet pill treatment",
    "phone mobile cell",
    "deep depth",
)]


@functools.lru_cache(maxsize=MEMO)
def lemma(word: str) -> str:
    """A plain base form: irregular forms mapped, -ing/-ed/-es/-s/-ly cut ("rising" -> "rise" ->
    "rise", "outages" -> "outage"); compared by its stem."""
    w = word.lower().strip("'’").removesuffix("'s").removesuffix("’s")
    if w in _IRREGULAR:
        return _IRREGULAR[w]
    for suf, add in (("ies", "y"), ("ing", ""), ("ied", "y"), ("ed", ""), ("es", ""), ("ly", ""), ("s", "")):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            base = w[: -len(suf)] + add
            if suf in ("ing", "ed") and len(base) > 3 and base[-1] == base[-2]:
                base = base[:-1]  # "stopped" -> "stop"
            return base
    return w


@functools.lru_cache(maxsize=MEMO)
def word_keys(word: str) -> frozenset[str]:
    """Keys under which a word counts as one the source uses: its stem, its lemma's stem, and
    its synonym groups."""
    low = word.lower().strip("'’")
    base = lemma(low)
    keys = {stem(low), stem(base)}
    for k, group in enumerate(_SYNONYMS):
        if low in group or base in group or any(g.startswith(base) and len(base) >= 4 for g in group):
            keys.add(f"syn{k}")
    return frozenset(keys)


@dataclass(frozen=True)
class Tok:
    text: str
    low: str
    kind: str  # "num" | "word" | "punct"
    value: str = ""


_COUNT_WORDS = {"twice": "2", "thrice": "3", "dozen": "12"}


def tokenize(text: str) -> list[Tok]:
    """The text's tokens (a new list each call; the tokens are shared and frozen)."""
    return list(_tokens(text))


@functools.lru_cache(maxsize=MEMO)
def _tokens(text: str) -> tuple[Tok, ...]:
    out: list[Tok] = []
    for m in _TOKEN.finditer(text):
        t = m.group(0)
        if t[0].isdigit():
            out.append(Tok(t, t, "num", t if ":" in t else C._norm_number(t)))
        elif t[0].isalpha():
            low = t.lower()
            if low.split("-")[0] in _COUNT_WORDS:  # "twice-daily": two a day
                out.append(Tok(t, low, "num", _COUNT_WORDS[low.split("-")[0]]))
            elif low in C._WORD_NUMBERS and low not in ("one", "half", "third", "second"):
                out.append(Tok(t, low, "num", C._WORD_NUMBERS[low]))
            elif "-" in low and all(p in C._WORD_NUMBERS for p in low.split("-")[:2]) and len(low.split("-")) == 2:
                a, b = low.split("-")
                try:
                    out.append(Tok(t, low, "num", str(int(C._WORD_NUMBERS[a]) + int(C._WORD_NUMBERS[b]))))
                except ValueError:
                    out.append(Tok(t, low, "word"))
            else:
                out.append(Tok(t, low, "word"))
        else:
            out.append(Tok(t, t, "punct"))
    return tuple(out)


_COMPARISON_BARRIER = {"compared", "versus", "vs", "against", "whereas"}


def _content(tok: Tok) -> bool:
    return tok.kind == "word" and (tok.low in _RELATIONAL or (tok.low not in _STOP and len(tok.low) > 1))


def context(toks: list[Tok], i: int, width: int = 4) -> dict[tuple[str, str], float]:
    """Side-aware context of token i: {(side, stem): weight}, weight 1/distance in content
    tokens, stopping at ; : ( ) and sentence ends; numbers occupy a position."""
    feats: dict[tuple[str, str], float] = {}
    for side, step in (("L", -1), ("R", 1)):
        d, j = 0, i + step
        while 0 <= j < len(toks) and d < width:
            t = toks[j]
            if (t.kind == "punct" and t.text in ";:().!?") or t.low in _COMPARISON_BARRIER:
                break  # "87 percent ..., compared with 71 percent": each side of a comparison has its own words
            if t.kind == "num" or _content(t):
                d += 1
                if t.kind == "word":
                    key = (side, stem(t.low))
                    feats[key] = max(feats.get(key, 0.0), 1.0 / d)
            j += step
    return feats


def _overlap(a: dict, b: dict) -> float:
    return sum(min(w, b[k]) for k, w in a.items() if k in b)


def _flat(feats: dict) -> dict[str, float]:
    out: dict[str, float] = {}
    for (_, s), w in feats.items():
        out[s] = max(out.get(s, 0.0), w)
    return out


@dataclass
class NumberUse:
    value: str
    index: int
    scale: str
    unit: str  # "percent" | "absolute" | ""


def number_uses(toks: list[Tok]) -> list[NumberUse]:
    out = []
    for i, t in enumerate(toks):
        if t.kind != "num":
            continue
        if i > 0 and toks[i - 1].text in ("-", "–") and i > 1 and toks[i - 2].kind == "word" \
                and toks[i - 2].text.isupper():
            continue  # a code like AN-400
        if i > 0 and toks[i - 1].kind == "word" and toks[i - 1].text[:1].isupper() and toks[i - 1].text.isupper() \
                and len(toks[i - 1].text) > 1:
            continue  # "PM2.5", "H13": part of a name
        scale, unit = "", ""
        j = i + 1
        if j < len(toks) and toks[j].low in _SCALES and (toks[j].low not in ("m", "k") or toks[j].text.islower()):
            scale = toks[j].low if toks[j].low not in ("bn", "m", "k") else {"bn": "billion", "m": "million",
                                                                            "k": "thousand"}[toks[j].low]
            j += 1
        if j < len(toks):
            nxt = toks[j].low
            if nxt in _PERCENT:
                unit = "percent"
            elif scale or (toks[j].kind == "word" and nxt not in _STOP and nxt not in _RELATIONAL
                           and nxt not in _RANGE_JOIN and len(nxt) > 2):
                unit = "absolute"
            elif nxt in _RANGE_JOIN and j + 1 < len(toks) and toks[j + 1].kind == "num":
                unit = "?range"
        out.append(NumberUse(t.value, i, scale, unit))
    # a range or a list ("from 66 to 89 percent", "21 and 39 percent") takes its unit from the last member
    for k in range(len(out) - 2, -1, -1):
        if out[k].unit == "?range":
            out[k].unit = out[k + 1].unit
            out[k].scale = out[k].scale or out[k + 1].scale
    return out


@dataclass
class Finding:
    kind: str  # number | date | polarity | negation | entity | refusal
    what: str


_APPROX = {"about", "around", "roughly", "nearly", "almost", "approximately", "some", "over", "under", "circa",
           "~", "approx", "close", "just", "more", "less", "than", "above", "below", "ca"}


_CLAUSE_WORDS = {"but", "while", "whereas", "although", "though"}


def _num_kind(value: str) -> str:
    if ":" in value:
        return "time"
    if re.fullmatch(r"(?:19|20)\d\d", value):
        return "year"
    return "amount"


def C_clip(s: str, n: int = 110) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _swapped(ca: dict, cb: dict, sa: dict, sb: dict, margin: float = 0.45) -> bool:
    """True when claim contexts (ca, cb) fit the source contexts crossed (sb, sa) clearly
    better than straight (sa, sb), counting only features that tell sa from sb."""
    disc_a = {k: w for k, w in sa.items() if k not in sb or sb[k] < w / 2}
    disc_b = {k: w for k, w in sb.items() if k not in sa or sa[k] < w / 2}
    straight = _overlap(ca, disc_a) + _overlap(cb, disc_b)
    crossed = _overlap(ca, disc_b) + _overlap(cb, disc_a)
    return crossed >= straight + margin and _overlap(ca, disc_b) > 0 and _overlap(cb, disc_a) > 0


def clauses(sentence: str) -> list[str]:
    return [c for c in _CLAUSE_SPLIT.split(sentence) if c and len(C._WORD.findall(c)) >= 2]


def best_clause(claim: str, sentence: str) -> tuple[str, float]:
    cs = {stem(w) for w in C._WORD.findall(claim) if w.lower() not in _STOP}
    best, score = sentence, -1.0
    for cl in clauses(sentence) or [sentence]:
        ws = {stem(w) for w in C._WORD.findall(cl) if w.lower() not in _STOP}
        s = len(cs & ws) / max(1, len(ws | cs) ** 0.5)
        if s > score:
            best, score = cl, s
    return best, score


def _best_clause_of(claim: str, sentences: list[str]) -> tuple[str, float]:
    """The closest clause of the best aligned sentence, or of a later aligned sentence (not
    a heading) when that one is clearly closer: a claim may join facts of two sentences."""
    best, score = best_clause(claim, sentences[0]) if sentences else ("", -1.0)
    for sentence in sentences[1:]:
        if C.is_heading(sentence):
            continue
        cl, sc = best_clause(claim, sentence)
        if sc > score + 0.2:
            best, score = cl, sc
    return best, score


def _words(text: str) -> list[str]:
    return [w.lower().strip("'’") for w in C._WORD.findall(text)]


_COMPARATIVE_Q = {"more", "less", "fewer", "over", "under", "above", "below", "up"}


def _quantity(toks_or_words, i: int) -> bool:
    """"more than 800 metres", "up to three days", "more than half": a quantity, not a direction;
    "costing more than lithium iron phosphate" compares, and is one."""
    def low(j: int) -> str:
        x = toks_or_words[j] if j < len(toks_or_words) else ""
        return x.low if isinstance(x, Tok) else str(x).lower()
    if low(i + 1) not in ("than", "to"):
        return False
    after = low(i + 2)
    return not after or after[:1].isdigit() or after in C._WORD_NUMBERS or after in ("half", "a", "an", "one", "twice",
                                                                                     "double", "triple", "ever")


def _num(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


#: Verbs that carry no direction of their own: "attendance went down" is about attendance.
_LIGHT = {"went", "go", "goes", "going", "gone", "got", "get", "gets", "became", "become", "becomes", "been", "be",
          "being", "made", "make", "makes", "felt", "feel", "feels", "seem", "seemed", "seems", "appeared", "appears",
          "remained", "stayed", "came", "come", "much", "far", "sharply", "slightly", "significantly", "even",
          "still", "considerably", "substantially", "markedly", "only", "average"}


_LIGHT_STEMS = {stem(w) for w in _LIGHT}


#: Verbs a reply uses to speak of the document rather than of the world ("it never names a make").
META_VERBS = frozenset(
    "say says said mention mentions mentioned discuss discusses discussed cover covers covered address addresses "
    "addressed name names named give gives list lists listed state states stated "
    "describe describes described answer answers answered tell tells specify specifies "
    "specified explain explains explained touch touches go goes into detail details".split())


#: Words that speak of the document itself, never facts the source must hold.
META_WORDS = META_VERBS | {"document", "paper", "article", "text", "page", "file", "question", "questions", "answer",
                           "answers", "information", "anything", "nothing", "anywhere", "covers", "about", "looked",
                           "focus", "focuses", "deals", "concerns"}


def comparable(claim: str, sentences: list[str]) -> list[str]:
    """The aligned sentences a claim's wording is compared with: a headline is compared with
    headlines too; a sentence not with a headline's wording."""
    return sentences if C.is_heading(claim) else [s for s in sentences if not C.is_heading(s)]
