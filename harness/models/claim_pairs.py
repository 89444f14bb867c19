"""Comparing a claim with the source sentence(s) it is aligned to: meaning, not tokens.

The offline critic (critic_offline.py) aligns each claim sentence with its closest source
sentences; this module compares the two within the pair and says what contradicts:

- numbers bound to what they count: every number of the claim is looked up where the source
  says it, with the words around it (side-aware context windows). A number whose every
  occurrence in the source is about something else was moved from another finding; two
  numbers (or names) whose contexts cross were swapped; a number whose unit differs
  (percent against an absolute amount, million against billion) was rescaled;
- dates: a day and month, or a month and year, must occur together in the source;
- direction and antonyms (rose/fell, longer/shorter, kept/lost, more/less, before/after,
  coated/uncoated...): the claim's word against the words of its aligned source clause;
- negation: parity of negation cues in the claim against the aligned clause, with "did not
  differ / change" read as "the same";
- names: a name the aligned sentence does not hold, while that sentence holds another name
  of the document the claim lacks, replaced it;
- refusals ("the document doesn't say X") are claims too: false when one source sentence
  holds what X is about.

Everything here is plain functions over strings: no embeddings, no I/O.
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
_SAME = re.compile(r"\b(?:(?:did|do|does|has|have|had|was|were|is|are)\s+not|didn'?t|doesn'?t|don'?t|never)\s+"
                   r"(?:\w+ly\s+)?(?:differ|change|vary|varied|move)\w*\b|\bno (?:significant |clear )?"
                   r"(?:difference|change)\b", re.I)
_SAME_WORDS = re.compile(r"\b(?:unchanged|same|similar|equally|stayed|steady|stable|flat)\b", re.I)
_CHANGE_WORDS = re.compile(r"\b(?:differ|differed|differs|different|changed|varied|improved|worsened|suffer|suffered|"
                           r"suffers|fell|dropped|declined|rose|increased|decreased|gained|harmed|hurt|worse|better)\b",
                           re.I)

# Direction and antonym groups: a claim word of one side against its aligned source clause.
_UP = ("longer larger bigger rise rose risen rising rises increase increased increases increasing grew grow grows growing grown up gain "
       "gained gains boost boosted raise raised raises lift lifts lifted climbed jumped higher more doubled double "
       "expanded widened greater extend extended extends add added adding doubling widening expanding climbing "
       "jumping raising lifting boosting gaining growth increases surge surged soared")
_DOWN = ("shorter smaller fall fell fallen falling falls decrease decreased decreases decreasing decline declined declines "
         "declining drop dropped drops down shrank shrink shrunk cut cuts reduce reduced reduces reducing lower "
         "lowered lowers less fewer halve halved halves narrowed narrow narrowing narrows slowed slowing smaller saving "
         "saved save shrinking dropping lowering cutting halving reduction reductions remove removed removing "
         "slump slumped plunged plummeted")
ANTONYMS: list[tuple[frozenset[str], frozenset[str]]] = [
    (frozenset(_UP.split()), frozenset(_DOWN.split())),
    (frozenset({"longer"}), frozenset({"shorter"})),
    (frozenset({"unchanged", "steady", "maintained"}),
     frozenset({"cut", "raised", "reduced", "increased", "lowered", "slashed", "changed", "rose", "fell"})),
    (frozenset({"larger", "bigger"}), frozenset({"smaller"})),
    (frozenset({"largest", "biggest"}), frozenset({"smallest"})),
    (frozenset({"highest"}), frozenset({"lowest"})),
    (frozenset({"most"}), frozenset({"least", "fewest"})),
    (frozenset({"before"}), frozenset({"after"})),
    (frozenset({"earlier", "early", "earliest", "sooner"}), frozenset({"later", "late", "latest"})),
    (frozenset({"cheaper", "cheap", "cheapest"}), frozenset({"dearer", "costlier", "expensive"})),
    (frozenset({"warmer", "hotter", "warm", "hot"}), frozenset({"cooler", "colder", "cool", "cold"})),
    (frozenset({"faster", "quicker", "fast", "quickly"}), frozenset({"slower", "slow", "slowly"})),
    (frozenset({"kept", "keep", "keeps", "retained", "retain", "retains"}), frozenset({"lost", "lose", "loses"})),
    (frozenset({"above", "over", "exceeded", "exceeds"}), frozenset({"below", "under", "within"})),
    # "about a third above" where the source says "about a third lower than"
    (frozenset({"above", "higher", "more", "greater"}), frozenset({"below", "lower", "less", "fewer"})),
    (frozenset({"first"}), frozenset({"last"})),
    (frozenset({"best"}), frozenset({"worst"})),
    (frozenset({"better", "improve", "improved", "improves"}), frozenset({"worse", "worsened", "worsen"})),
    (frozenset({"overestimate", "overestimated", "overestimates"}),
     frozenset({"underestimate", "underestimated", "underestimates"})),
    (frozenset({"maximum"}), frozenset({"minimum"})),
    (frozenset({"welcomed", "supported", "backed", "praised"}), frozenset({"opposed", "criticised", "criticized"})),
    (frozenset({"approved", "accepted"}), frozenset({"rejected", "refused"})),
    (frozenset({"helped", "help", "helps", "benefited", "benefit", "benefits"}),
     frozenset({"hurt", "hurts", "harmed", "harm", "harms"})),
    (frozenset({"easy", "easier", "simple"}), frozenset({"difficult", "hard", "harder"})),
    (frozenset({"stronger", "strong"}), frozenset({"weaker", "weak", "weaken"})),
    (frozenset({"allowed", "permitted"}), frozenset({"forbidden", "banned", "prohibited"})),
    (frozenset({"success", "succeeded", "passed"}), frozenset({"failure", "failed"})),
    (frozenset({"profit"}), frozenset({"loss"})),
    (frozenset({"survived", "survive", "survives", "survival", "lived"}), frozenset({"died", "die", "dies", "killed"})),
    (frozenset({"warmer", "hotter", "higher"}), frozenset({"cooler", "colder", "lower"})),
    (frozenset({"completed", "complete", "completion", "finished", "finish"}),
     frozenset({"abandoned", "abandon", "quit", "stopped", "incomplete"})),
    (frozenset({"inside", "indoor", "indoors"}), frozenset({"outside", "outdoor", "outdoors"})),
    (frozenset({"double", "doubled", "twice"}), frozenset({"halve", "halved", "half"})),
    (frozenset({"gained", "gain", "gains", "gaining", "won", "win", "wins"}),
     frozenset({"lost", "lose", "loses", "losing"})),
    (frozenset({"abundant", "plentiful"}), frozenset({"scarce", "scarcer", "rare", "rarer"})),
    (frozenset({"clockwise"}), frozenset({"anticlockwise", "counterclockwise", "counter-clockwise"})),
    (frozenset({"surplus"}), frozenset({"deficit"})),
    (frozenset({"majority"}), frozenset({"minority"})),
]
#: "high" and "low" carry a direction too ("high literacy" where the source says people could not
#: read well), though they are too common to pair ("low doses", "high share" are said of anything)
_POLAR_WORDS = frozenset().union(*(a | b for a, b in ANTONYMS)) | {"high", "low"}
#: Direction words that take what follows them as their own ("later school start"): an anchor
#: scan stops there. Nouns of the pairs ("profit", "success") do not steer.
_STEERING = ANTONYMS[0][0] | ANTONYMS[0][1] | frozenset(
    "earlier early later late warmer cooler hotter colder faster slower quicker cheaper dearer better worse".split())
_MULTI_ANTONYMS = [(("at", "least"), ("up", "to")), (("at", "least"), ("at", "most")),
                   (("more", "likely"), ("less", "likely")), (("more", "than"), ("less", "than")),
                   (("more", "than"), ("fewer", "than"))]
_CLAUSE_SPLIT = re.compile(r"\s*(?:[;:,]|\b(?:but|while|whereas|although|compared with|against)\b|\band\s+(?=(?:said|says|"
                           r"would|will|is|was|were|are|has|had|have|did|does|do|can|could|may|might|must|should|made|make|makes|felt|"
                           r"feel|feels|became|become|got|gets|it|they|their|its|the|only)\b|\d))\s*", re.I)
_MONTH_RE = "|".join(C._MONTHS)
_DATE = re.compile(rf"(?:\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?)?\b({_MONTH_RE})\b(?:\s+(\d{{1,2}})(?!\d)(?:st|nd|rd|th)?,?)?"
                   rf"(?:\s+(?:of\s+)?(\d{{4}}))?", re.I)
_ORDINAL_DAYS = {"first": "1", "second": "2", "third": "3", "fourth": "4", "fifth": "5", "tenth": "10",
                 "fifteenth": "15", "twentieth": "20"}
_REFUSAL = re.compile(
    r"^(?:the|this)\s+(?:document|paper|article|report|review|policy|manual|guide|text|notes|study|source|page|file|"
    r"story|memo|release)\s+"
    r"(?:\w+\s+){0,2}?(?:does\s+not|doesn't|doesn’t|did\s+not|didn't|never|can\s*not|can't|has\s+no|gives\s+no|"
    r"contains\s+no|says\s+nothing|makes\s+no|is\s+silent)\b(.*)$", re.I)
_TOPIC_STOP = _STOP | {"anything", "information", "mention", "mentions", "say", "says", "discuss", "discusses",
                       "cover", "covers", "answer", "answers", "give", "gives", "provide", "provides", "include",
                       "includes", "specify", "state", "states", "report", "recommend", "recommends", "contain",
                       "address", "addresses", "question", "details", "detail", "any", "many", "much", "often",
                       "long", "whether", "why", "which", "who", "much", "there", "data", "figures", "said",
                       "talk", "tell", "tells", "nothing", "silent", "makes", "has", "no", "document", "paper",
                       "article", "policy", "manual", "so", "can't", "cannot", "from", "i", "it", "that", "on",
                       "does", "doesn't", "not", "explain", "explains", "describe", "describes", "figure", "number",
                       "amount", "how", "what", "when", "where", "exact", "exactly", "precise", "specific"}


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


def word_keys(word: str) -> set[str]:
    """Keys under which a word counts as one the source uses: its stem, its lemma's stem, and
    its synonym groups."""
    low = word.lower().strip("'’")
    base = lemma(low)
    keys = {stem(low), stem(base)}
    for k, group in enumerate(_SYNONYMS):
        if low in group or base in group or any(g.startswith(base) and len(base) >= 4 for g in group):
            keys.add(f"syn{k}")
    return keys


@dataclass
class Tok:
    text: str
    low: str
    kind: str  # "num" | "word" | "punct"
    value: str = ""


_COUNT_WORDS = {"twice": "2", "thrice": "3", "dozen": "12"}


def tokenize(text: str) -> list[Tok]:
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
    return out


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


# -- numbers ---------------------------------------------------------------------------------

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


#: Units of one kind: a number told in another unit of its kind says another amount.
_UNIT_FAMILIES = [frozenset(g.split()) for g in (
    "second seconds sec secs minute minutes min mins hour hours hr hrs day days week weeks month months year years",
    "nanogram nanograms ng microgram micrograms milligram milligrams mg gram grams kilogram kilograms kg tonne "
    "tonnes ton tons",
    "millimetre millimetres millimeter millimeters mm centimetre centimetres centimeter centimeters cm metre metres "
    "meter meters kilometre kilometres kilometer kilometers km mile miles",
    "euro euros dollar dollars pound pounds",
    "watt watts kilowatt kilowatts megawatt megawatts gigawatt gigawatts",
    "millilitre millilitres litre litres liter liters cubic gallon gallons",
)]
_UNIT_BASE = {"secs": "second", "sec": "second", "mins": "minute", "min": "minute", "hr": "hour", "hrs": "hour",
              "ng": "nanogram", "mg": "milligram", "kg": "kilogram", "mm": "millimetre", "cm": "centimetre",
              "km": "kilometre", "ton": "tonne", "meter": "metre", "liter": "litre"}


def _unit_word(toks: list[Tok], u: NumberUse) -> str:
    """The unit word said right after a number (past its scale word): 'minutes', 'kg'."""
    j = u.index + 1 + (1 if u.scale else 0)
    if j < len(toks) and toks[j].kind == "word":
        w = toks[j].low.strip("'’")  # "four weeks' notice"
        w = _UNIT_BASE.get(w, w)
        w = _UNIT_BASE.get(w.rstrip("s"), w.rstrip("s")) if w not in ("hours", "days") else w[:-1]
        return w
    return ""


def _family(word: str) -> int:
    for k, fam in enumerate(_UNIT_FAMILIES):
        if word in fam or word + "s" in fam:
            return k
    return -1


def check_unit_words(claim_toks: list[Tok], src: SourceIndex) -> list[Finding]:
    """"52 hours" where every place the source says 52 says "52 minutes": the same number in
    another unit of the same kind (time, mass, length, money, power, volume) is another amount."""
    for u in number_uses(claim_toks):
        mine = _unit_word(claim_toks, u)
        fam = _family(mine) if mine else -1
        if fam < 0:
            continue
        theirs = {_unit_word(src.toks[k], su) for k, su in src.occurrences(u.value)}
        same_kind = {w for w in theirs if _family(w) == fam}
        if same_kind and mine not in same_kind and not (theirs - same_kind - {""}) and "" not in theirs:
            return [Finding("number", f"{u.value} {mine}s where the source says {u.value} "
                                      f"{sorted(same_kind)[0]}s")]
    return []


def _unit_clash(claim_use: NumberUse, src_uses: list[NumberUse]) -> str:
    same = [u for u in src_uses if u.value == claim_use.value]
    if not same:
        return ""
    if claim_use.scale and all(u.scale != claim_use.scale for u in same) and any(u.scale or u.unit for u in same):
        return (f"{claim_use.value} {claim_use.scale} where the source says "
                f"{claim_use.value} {same[0].scale or same[0].unit or '(no scale)'}")
    if claim_use.unit == "percent" and all(u.unit == "absolute" for u in same):
        return f"{claim_use.value} percent where the source's {claim_use.value} is an absolute amount"
    if claim_use.unit == "absolute" and all(u.unit == "percent" for u in same):
        return f"{claim_use.value} as an absolute amount where the source says {claim_use.value} percent"
    return ""


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
        self.negated = negated_stems(sentences)
        self.codes = {t.low for ts in self.toks for t in ts if t.kind == "word" and any(c.isdigit() for c in t.low)}
        #: words the source also writes in lower case: common nouns, not names
        self.common = {t.text for ts in self.toks for t in ts if t.kind == "word" and t.text.islower()}
        text = "\n".join(sentences)
        self.dates = _dates(text)
        #: the first letters of its words in a row, a space at every break (critic_offline._spelled_out)
        self.initials = initials(text)
        #: the names the document is about: in its title lines, or in three sentences or more (a claim
        #: may name them where its sentence says "the company"); any other name belongs to its own sentences
        self._head = set().union(*self.lows[:2]) if self.lows else set()

    @functools.cached_property
    def plain(self) -> set[str]:
        """Every word some sentence says plainly, not as what a negation negates (stems)."""
        return {stem(t.low) for x in self.sentences
                for targets in [{j for j, _ in _targets(x)}]
                for j, t in enumerate(tokenize(_SAME.sub(" SAMEMARK ", x))) if t.kind == "word" and j not in targets}

    def main_name(self, name: str) -> bool:
        return name in self._head or sum(1 for lw in self.lows if name in lw) >= 3

    def occurrences(self, value: str) -> list[tuple[int, NumberUse]]:
        return [(k, u) for k, uses in enumerate(self.uses) for u in uses if u.value == value]


def _dates(text: str) -> list[tuple[str | None, str, str | None]]:
    out = []
    for m in _DATE.finditer(text):
        day = m.group(1) or m.group(3)
        out.append((day, m.group(2).lower(), m.group(4)))
    for m in re.finditer(rf"\b(first|second|third|fourth|fifth|tenth|fifteenth|twentieth) of ({_MONTH_RE})\b",
                         text, re.I):
        out.append((_ORDINAL_DAYS[m.group(1).lower()], m.group(2).lower(), None))
    return out


def check_dates(claim: str, src: SourceIndex) -> list[Finding]:
    found = []
    for day, month, year in _dates(claim):
        ok = False
        for sd, sm, sy in src.dates:
            if sm != month:
                continue
            if day and sd != day:
                continue
            if year and sy and sy != year:
                continue
            if year and not sy and not day:
                continue  # "March" alone in the source does not say "March 2022"
            ok = True
            break
        if not ok:
            shown = " ".join(x for x in (day, month.capitalize(), year) if x)
            found.append(Finding("date", f"the date {shown!r} does not occur in the source"))
    return found


_APPROX = {"about", "around", "roughly", "nearly", "almost", "approximately", "some", "over", "under", "circa",
           "~", "approx", "close", "just", "more", "less", "than", "above", "below", "ca"}


def approximate_values(toks: list[Tok]) -> set[str]:
    """Numbers the claim gives as approximate ("about 4 degrees", "more than 300 homes")."""
    return {t.value for i, t in enumerate(toks) if t.kind == "num" and i > 0 and toks[i - 1].low in _APPROX}


def rounds_to(claim_value: str, source_value: str) -> bool:
    """True when the claim's number is the source's number rounded (4.2 -> 4, 14,500 -> 15,000,
    310 -> 300): a coarser figure within 10 percent, never a finer or a different one."""
    try:
        c, v = float(claim_value), float(source_value)
    except ValueError:
        return False
    if c == v or v == 0 or abs(c - v) / abs(v) > 0.1:
        return False
    for step in (0.1, 0.5, 1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 50000, 100000, 500000, 1000000):
        if step < abs(v) and abs(round(v / step) * step - c) < 1e-9:
            return True
    return False


def rounded_in(value: str, src: "SourceIndex", sentences: list[int]) -> bool:
    """The value is a rounding of a number of one of these source sentences."""
    return any(rounds_to(value, u.value) for k in sentences for u in src.uses[k])


_CLAUSE_WORDS = {"but", "while", "whereas", "although", "though"}


def _clause_mates(toks: list[Tok], u: NumberUse, uses: list[NumberUse]) -> set[str]:
    """The other numbers of u's clause (clauses end at , ; : and but/while/..., and at "and"
    before a number): "91 percent of its capacity after 2,000 cycles" binds 91 and 2,000."""
    ids, c = [], 0
    for i, t in enumerate(toks):
        if (t.kind == "punct" and t.text in ",;:") or t.low in _CLAUSE_WORDS \
                or (t.low == "and" and i + 1 < len(toks) and toks[i + 1].kind == "num"):
            c += 1
        ids.append(c)
    return {x.value for x in uses if x.index != u.index and ids[x.index] == ids[u.index] and x.value != u.value}


def _whole_of_fraction(u: NumberUse, occ: list[tuple[int, NumberUse]], src: "SourceIndex", values: set[str]) -> str:
    """The source says the number only as the whole of "N of M" ("two of its eleven
    factories") and the claim says M without N: it counts the whole as the part."""
    parts = []
    for k, su in occ:
        toks = src.toks[k]
        part = next((toks[i] for i in range(max(0, su.index - 3), su.index)
                     if toks[i].kind == "num" and _fraction_pair(toks, i, su.index)), None)
        if part is None:
            return ""
        parts.append((k, part.value))
    if parts and all(p not in values for _, p in parts):
        k, p = parts[0]
        return f"the claim says {u.value} where the source says {p} of {u.value}: \"{C_clip(src.sentences[k])}\""
    return ""


_YEAR_LEAD = {"in", "since", "until", "during"} | set(C._MONTHS)


def _as_year(toks: list[Tok], i: int) -> bool:
    """The number at token i stands where a year stands: after "in/since/by/..." or a month,
    and not followed by a word it counts ("in 2025," vs "in 11 districts")."""
    before = toks[i - 1].low if i > 0 else ""
    after = toks[i + 1] if i + 1 < len(toks) else None
    return before in _YEAR_LEAD and (after is None or (after.kind == "punct" and after.text in ",.;:!?"))


def _year_clash(u: NumberUse, claim_toks: list[Tok], occ: list[tuple[int, NumberUse]], src: "SourceIndex") -> str:
    """A year told as an amount ("2025 percent") or an amount told as a year ("in 11"): the source
    uses the number only the other way."""
    year_shaped = _num_kind(u.value) == "year"
    here = _as_year(claim_toks, u.index)
    there = [_as_year(src.toks[k], su.index) or (_num_kind(su.value) == "year" and not su.unit) for k, su in occ]
    if year_shaped and (u.unit == "percent" or u.scale) and not here and all(there):
        return f"{u.value} as an amount where the source's {u.value} is a year"
    if not year_shaped and here and not any(there):
        return f"{u.value} as a year where the source's {u.value} is an amount"
    return ""


def _other_year(u: NumberUse, claim_toks: list[Tok], src: "SourceIndex", aligned: list[int]) -> str:
    """The year an aligned sentence gives where the claim gives ``u``, said of the same things."""
    ctx = _flat(context(claim_toks, u.index, width=4))
    for k in aligned:
        for su in src.uses[k]:
            if _num_kind(su.value) == "year" and su.value != u.value \
                    and _overlap(ctx, _flat(context(src.toks[k], su.index, width=4))) >= 0.8:
                return f"{u.value} where the source says {su.value}: \"{C_clip(src.sentences[k])}\""
    return ""


def _num_kind(value: str) -> str:
    if ":" in value:
        return "time"
    if re.fullmatch(r"(?:19|20)\d\d", value):
        return "year"
    return "amount"


def sums_to(value: str, src: "SourceIndex", sentences: list[int]) -> bool:
    """The value is the total of two amounts one source sentence gives side by side ("twelve
    restored marshes and six natural marshes" -> 18 marshes)."""
    try:
        v = float(value)
    except ValueError:
        return False
    for k in sentences:
        amounts = [u for u in src.uses[k] if u.unit != "percent" and _num_kind(u.value) == "amount"]
        for x in range(len(amounts)):
            for y in range(x + 1, len(amounts)):
                if abs(float(amounts[x].value) + float(amounts[y].value) - v) < 1e-9:
                    return True
    return False


def _fraction_pair(toks: list[Tok], a: int, b: int) -> bool:
    """Tokens a and b are the two numbers of "a of (the|its|their) b" ("nine of the twelve
    schools", "two of its eleven factories"): both count the same thing."""
    lo, hi = min(a, b), max(a, b)
    between = [t.low for t in toks[lo + 1:hi]]
    return 1 <= len(between) <= 2 and between[0] == "of" and all(w in ("of", "the", "its", "their", "our", "his",
                                                                     "her", "all", "these", "those")
                                                                 for w in between)


def check_numbers(claim_toks: list[Tok], src: SourceIndex, aligned: list[int]) -> list[Finding]:
    """Numbers against where the source says them: moved, rescaled, or swapped."""
    found: list[Finding] = []
    uses = number_uses(claim_toks)
    bound: dict[int, tuple[int, NumberUse]] = {}
    values = {u.value for u in uses}
    # a sentence holding two of the claim's numbers is where the claim comes from, aligned or not
    holds = [k for k, su in enumerate(src.uses) if len(values & {x.value for x in su}) >= 2]
    approx = approximate_values(claim_toks)
    for u in uses:
        occ = src.occurrences(u.value)
        if not occ:
            # a year no sentence of the source says (only a reference or a heading has it): the year
            # the aligned sentence gives the same thing ("a 2019 survey" / "In a 2021 survey")
            other = _other_year(u, claim_toks, src, aligned[:2]) if _num_kind(u.value) == "year" else ""
            if other:
                found.append(Finding("date", other))
            continue  # a number the source lacks: the caller reports it
        if u.value in approx and rounded_in(u.value, src, aligned[:3]):
            continue  # "about 4 degrees" where the aligned sentence says 4.2 degrees
        ctx = _flat(context(claim_toks, u.index, width=6))
        best, best_score = None, -1.0
        for k, su in occ:
            score = _overlap(ctx, _flat(context(src.toks[k], su.index, width=6)))
            if k in aligned[:3]:
                score += 0.25
            if score > best_score:
                best, best_score = (k, su), score
        assert best is not None
        if best_score < 0.3 and best[0] not in aligned[:2] and best[0] not in holds and ctx:
            found.append(Finding("number", f"number {u.value} occurs in the source, but not with what the claim "
                                           f"says it counts (there: \"{C_clip(src.sentences[best[0]])}\")"))
            continue
        whole = _whole_of_fraction(u, occ, src, values)
        if whole:
            found.append(Finding("number", whole))
            continue
        mates = _clause_mates(claim_toks, u, uses)
        moved = _rebound(u, claim_toks, src, aligned[:2], occ, mates)
        if moved:
            found.append(Finding("number", moved))
            continue
        # the unit where the source says the number of the same things ("1 percent by weight of aluminium
        # phosphate" for "1 kilogram of aluminium phosphate"), or where it says it at all
        clash = (_unit_clash(u, [best[1]]) if best_score >= 1.0 else "") or _unit_clash(u, [su for _, su in occ]) \
            or _year_clash(u, claim_toks, occ, src)
        if clash:
            found.append(Finding("number", clash))
            continue
        bound[u.index] = best
    found += _crossings(claim_toks, src, bound)
    return found


def _rebound(u: NumberUse, claim_toks: list[Tok], src: SourceIndex, aligned: list[int],
             occ: list[tuple[int, NumberUse]], others: set[str] = frozenset()) -> str:
    """The aligned sentence says another number where the claim puts this one: what the
    claim's number is bound to (its side-aware context) fits that other number clearly
    better than any place the source uses the claim's own number. The claim's other numbers
    bind too: a source sentence that holds the claim's number together with another number
    of the claim is where the claim comes from ("91 percent ... after 2,000 cycles"); and in
    "nine of the twelve schools" both numbers count schools, so neither replaces the other."""
    ctx = context(claim_toks, u.index)
    if not ctx:
        return ""

    def company(k: int) -> float:  # the sentence also holds another number of the claim's clause
        return 1.0 if others & {x.value for x in src.uses[k]} else 0.0

    own = max((_overlap(ctx, context(src.toks[k], su.index)) + company(k) for k, su in occ), default=0.0)
    claim_uses = number_uses(claim_toks)
    best_alt, alt_at = 0.0, None
    for k in aligned:
        own_here = [x.index for x in src.uses[k] if x.value == u.value]
        for su in src.uses[k]:
            if su.value == u.value or (u.unit and su.unit and u.unit != su.unit and "?" not in su.unit + u.unit):
                continue
            if any(i < su.index and _fraction_pair(src.toks[k], i, su.index) for i in own_here):
                continue  # the claim's number is the part in "two of its eleven factories"
            if _num_kind(su.value) != _num_kind(u.value):
                continue  # a clock time is not a count, a year not an amount
            score = _overlap(ctx, context(src.toks[k], su.index)) + company(k)
            theirs = context(src.toks[k], su.index)
            if any(_overlap(_flat(context(claim_toks, x.index)), _flat(theirs)) >= _overlap(ctx, theirs)
                   for x in claim_uses if x.value == su.value and x.index != u.index):
                continue  # the claim says that number too, where it belongs: reordered, not replaced
            if score > best_alt:
                best_alt, alt_at = score, (k, su)
    if alt_at and best_alt >= 0.8 and best_alt >= own + 0.5:
        k, su = alt_at
        return (f"the claim says {u.value} where the source says {su.value}: \"{C_clip(src.sentences[k])}\"")
    return ""


def C_clip(s: str, n: int = 110) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _crossings(claim_toks: list[Tok], src: SourceIndex, bound: dict[int, tuple[int, NumberUse]]) -> list[Finding]:
    """Two numbers of one source sentence whose contexts are crossed in the claim: swapped."""
    by_sentence: dict[int, list[tuple[int, NumberUse]]] = {}
    for ci, (k, su) in bound.items():
        by_sentence.setdefault(k, []).append((ci, su))
    found = []
    for k, pairs in by_sentence.items():
        values = {su.value for _, su in pairs}
        if len(values) < 2:
            continue
        for x in range(len(pairs)):
            for y in range(x + 1, len(pairs)):
                (ca, sa), (cb, sb) = pairs[x], pairs[y]
                if sa.value == sb.value:
                    continue
                if _swapped(context(claim_toks, ca), context(claim_toks, cb),
                            context(src.toks[k], sa.index), context(src.toks[k], sb.index)):
                    found.append(Finding("number", f"numbers {sa.value} and {sb.value} are swapped: the source "
                                                   f"says \"{C_clip(src.sentences[k])}\""))
    return found


def _swapped(ca: dict, cb: dict, sa: dict, sb: dict, margin: float = 0.45) -> bool:
    """True when claim contexts (ca, cb) fit the source contexts crossed (sb, sa) clearly
    better than straight (sa, sb), counting only features that tell sa from sb."""
    disc_a = {k: w for k, w in sa.items() if k not in sb or sb[k] < w / 2}
    disc_b = {k: w for k, w in sb.items() if k not in sa or sa[k] < w / 2}
    straight = _overlap(ca, disc_a) + _overlap(cb, disc_b)
    crossed = _overlap(ca, disc_b) + _overlap(cb, disc_a)
    return crossed >= straight + margin and _overlap(ca, disc_b) > 0 and _overlap(cb, disc_a) > 0


# -- names -------------------------------------------------------------------------------------

def _initial_name(sentence: str, src: SourceIndex) -> set[str]:
    """A sentence's first word as a name: capitalised, never written in lower case by the
    source, not a function word ("Chiara will update...")."""
    words = C._WORD.findall(sentence)
    if not words or not words[0][:1].isupper() or C.is_heading(sentence):
        return set()
    low = words[0].lower().strip("'’")
    if low in C._NOT_NAMES or low in _STOP or low in src.common or len(low) < 3:
        return set()
    if src.sentences and not any(low in lw for lw in src.lows):
        return set()  # a word the source never uses ("Simple text message reminders..."): not one of its names
    return {low}


def _acronym(name: str, src: SourceIndex) -> bool:
    """A short word the source writes in capitals (VPN, GPS, SMS), or the letters of a code (PM2.5):
    a term, not someone's name."""
    return len(name) <= 4 and re.search(r"\b" + re.escape(name.upper()) + r"(?![A-Za-z])",
                                        " ".join(src.sentences)) is not None


def _holds(src: SourceIndex, k: int, name: str) -> bool:
    return (name in src.lows[k] or stem(name) in src.stems[k]
            or re.search(r"(?<!\w)" + re.escape(name) + r"(?!\w)", src.sentences[k].lower()) is not None)


def _name_facts(claim: str, name: str, strict: bool = False) -> set[str]:
    """What the claim says of ``name``: the content words and numbers of its clause that holds the
    name (the whole claim when that clause says nothing more), names left out. ``strict``: only
    the name's own part of the clause ("use the VPN and report lost devices": "use the VPN"), and
    nothing when that part says nothing."""
    part = next((c for c in clauses(claim) if name in c.lower()), claim)
    if strict:
        part = next((c for c in re.split(r"\s+and\s+", part) if name in c.lower()), part)
    named = {x for w in C._WORD.findall(claim) if w[:1].isupper()  # "Eastmere Regional Transport Authority"
             for x in (stem(w), stem(lemma(w)))}

    def facts(text: str) -> set[str]:
        toks = tokenize(text)
        return ({stem(lemma(t.low)) for t in toks if t.kind == "word" and t.low not in _STOP and len(t.low) > 2
                 and not any(c.isdigit() for c in t.low)}
                | {u.value for u in number_uses(toks)}) - {x for w in name.split() for x in (stem(w), stem(lemma(w)))} \
            - named

    mine = facts(part)
    return mine if len(mine) >= 2 or strict else facts(claim)


def _shared_facts(mine: set[str], src: SourceIndex, k: int) -> int:
    return len(mine & (src.sentence_keys[k] | {u.value for u in src.uses[k]}))  # "helped" / "its help"


def _fact_sentence(claim: str, name: str, src: SourceIndex, aligned: list[int]) -> int:
    """The aligned sentence that holds the facts said of ``name``: the one sharing most content
    words and numbers with the claim's clause that holds the name, the name itself left out."""
    mine = _name_facts(claim, name)
    return max(aligned, key=lambda k: (_shared_facts(mine, src, k), -aligned.index(k)))


def check_name_facts(claim: str, claim_names: set[str], src: SourceIndex) -> list[Finding]:
    """Who did what: a name (or a code) of the document given facts that the source says of
    something else. "Marta Lindgren sold 14 percent more" where the 14 percent is the company's
    revenue and Lindgren's own sentences say other things; "The HEPA H13 purifies rooms of 40
    square metres" where that is the purifier's. Every sentence of the document is read; the
    names of its title lines (what the document is about) are left to check_names."""
    if C.is_heading(claim):
        return []
    toks = tokenize(claim)
    codes = {t.low for t in toks if t.kind == "word" and t.low in src.codes and "-" in t.low}
    body = [k for k in range(len(src.sentences)) if not C.is_heading(src.sentences[k])]
    for n in sorted((claim_names | codes) - src._head):
        if (n not in src.names and n not in codes) or n in src.common or n in C._MONTHS:
            continue
        holding = [k for k in body if _holds(src, k, n)]
        if not holding:
            continue  # a name the source never writes: the missing-name check reads it
        mine = _name_facts(claim, n, strict=True)
        if len(mine) < 3:
            continue
        own = max(_shared_facts(mine, src, k) for k in holding)
        best = max(body, key=lambda k: _shared_facts(mine, src, k))
        other = _shared_facts(mine, src, best)
        if best not in holding and other >= 3 and other >= own + 2:
            return [Finding("entity", f"what the claim says of {n!r} the source says of something else: "
                                      f"\"{C_clip(src.sentences[best])}\"; the source's sentences on {n!r} say "
                                      f"other things: \"{C_clip(src.sentences[holding[0]])}\"")]
    return []


def check_code_binding(claim: str, src: SourceIndex) -> list[Finding]:
    """A code (grant HF-2021-0457, filter AN-F40) belongs to the name written before it: "the
    Halvorsen Foundation (grant NYHF-22-019)" where the source gives NYHF-22-019 to the Nordic
    Youth Health Fund, named in the same sentence."""
    def owner(toks: list[Tok], i: int) -> str:
        for j in range(i - 1, max(-1, i - 8), -1):
            t = toks[j]
            if t.kind == "punct" and t.text in ";.!?":
                return ""
            if t.kind == "word" and t.text[:1].isupper() and j > 0 and t.low not in _STOP \
                    and t.low not in C._NOT_NAMES and t.low not in src.codes and t.low not in src.common:
                return t.low
        return ""

    toks = tokenize(claim)
    for i, t in enumerate(toks):
        if t.kind != "word" or "-" not in t.low or t.low not in src.codes:
            continue
        mine = owner(toks, i)
        if not mine:
            continue
        for k, stoks in enumerate(src.toks):
            for si, st in enumerate(stoks):
                if st.low != t.low:
                    continue
                theirs = owner(stoks, si)
                if theirs and theirs != mine and mine in src.lows[k]:
                    return [Finding("entity", f"{t.text} is given to {mine!r}, where the source gives it to "
                                              f"{theirs!r}: \"{C_clip(src.sentences[k])}\"")]
    return []


def check_names(claim: str, claim_names: set[str], src: SourceIndex, aligned: list[int]) -> list[Finding]:
    """A name of the document put where the aligned sentence has another name; two names swapped."""
    found: list[Finding] = []
    claim_names = claim_names | _initial_name(claim, src)
    if not claim_names or not aligned:
        return found
    body = [k for k in aligned if not C.is_heading(src.sentences[k])]
    if not body or C.is_heading(claim):
        return found
    claim_low = claim.lower()
    for n in sorted(claim_names):
        if (n not in src.names and n not in _initial_name(claim, src)) or n in src.common:
            continue
        # a sentence claim is held to a sentence, not to the headline it resembles: the one holding
        # the facts of the clause that names n ("..., and it will close two European factories")
        if _holds(src, _fact_sentence(claim, n, src, body), n):
            continue
        top = body[0]
        top_names = (C.names(src.sentences[top], src.names) & src.names) | _initial_name(src.sentences[top], src)
        near = n in src.lows[top] or stem(n) in src.stems[top]
        if near:
            continue
        others = {m for m in top_names if m not in claim_low and m != n}
        if others:
            found.append(Finding("entity", f"name {n!r} is not in the sentence that supports this claim, which names "
                                           f"{', '.join(sorted(others))} instead: \"{C_clip(src.sentences[top])}\""))
        elif (n in src.names and not src.main_name(n) and n not in C._WORD_NUMBERS and not _acronym(n, src)
              and not _holds(src, _fact_sentence(claim, n, src, aligned), n)):
            # a minor name of the document (a person quoted, a district, an author) given a fact
            # that its own sentences do not hold: "In Weber, streets with trees were cooler"
            where = next((k for k, lw in enumerate(src.lows) if n in lw), None)
            found.append(Finding("entity", f"name {n!r} does not occur in the sentences that support this claim"
                                           + (f"; the source names it only elsewhere: \"{C_clip(src.sentences[where])}\""
                                              if where is not None else "")
                                           + f"; supporting sentence: \"{C_clip(src.sentences[top])}\""))
    return found


def check_name_numbers(claim: str, src: SourceIndex) -> list[Finding]:
    """A name followed by a number ("Kingsgate 8", "Letters 12") is a label of its own: the
    source must write that pair too. Years, percentages and amounts with a unit are not labels."""
    if C.is_heading(claim):
        return []
    toks = tokenize(claim)
    text = " ".join(" ".join(t.low for t in ts) for ts in src.toks)
    for i in range(1, len(toks) - 1):
        t, n = toks[i], toks[i + 1]
        if t.kind != "word" or not t.text[:1].isupper() or n.kind != "num" or not n.text.isdigit() \
                or t.low in C._NOT_NAMES or t.low in _STOP or t.low in C._MONTHS or _num_kind(n.value) != "amount":
            continue
        after = toks[i + 2].low if i + 2 < len(toks) else ""
        if after in _PERCENT or after in _SCALES or (toks[i + 2].kind == "word" and after in src.common
                                                     and after.endswith("s") and after not in _STOP
                                                     if i + 2 < len(toks) else False):
            continue  # "Revenue 14 percent", "Kingsgate 3 protected lanes": a count of something
        pair = f"{t.low} {n.text.lower()}"
        if not re.search(r"(?<![\w.])" + re.escape(pair) + r"(?![\w.])", text):  # "Kingsgate 2" is not "Kingsgate 27"
            return [Finding("entity", f"{t.text} {n.text} is not a name the source uses")]
        # a label the source uses ("Kingsgate 8", a counter): the claim's amounts must be said with it
        amounts = {u.value for u in number_uses(toks) if u.index != i + 1 and _num_kind(u.value) == "amount"}
        homes = [k for k, ts in enumerate(src.toks) if pair in " ".join(x.low for x in ts)]
        if amounts and not any(amounts & {u.value for u in src.uses[k]} for k in homes):
            return [Finding("entity", f"{t.text} {n.text} is a label of the source, but what the claim says of it is "
                                      f"said elsewhere: \"{C_clip(src.sentences[homes[0]])}\"")]
        # nor a word of what the claim says of it ("cycling in Kingsgate 2" where Kingsgate 2 is a counter
        # station of a data table)
        said = _name_facts(claim, t.low, strict=True) - {n.value}
        if len(said) >= 3 and not any(said & (src.stems[k] | {u.value for u in src.uses[k]}) for k in homes):
            return [Finding("entity", f"{t.text} {n.text} is a label of the source that none of what the claim "
                                      f"says of it is said with: \"{C_clip(src.sentences[homes[0]])}\"")]
    return []


def check_word_swaps(claim_toks: list[Tok], src: SourceIndex, aligned: list[int]) -> list[Finding]:
    """Two content words (names, groups, antonym pairs) that trade places within the aligned
    sentence: 'coated ... 19 percent, uncoated ... 6 percent' told the other way round."""
    if not aligned:
        return []
    k = aligned[0]
    stoks = src.toks[k]
    s_index: dict[str, list[int]] = {}
    for i, t in enumerate(stoks):
        if _content(t) and t.low not in _RELATIONAL:
            s_index.setdefault(t.low, []).append(i)
    c_index: dict[str, list[int]] = {}
    for i, t in enumerate(claim_toks):
        if _content(t) and t.low not in _RELATIONAL:
            c_index.setdefault(t.low, []).append(i)
    def label(w: str) -> bool:  # a name, or a word a number is said of ("coated ... 91 percent")
        i = s_index[w][0]
        if w in src.names or stoks[i].text[:1].isupper() and i > 0:
            return True
        near = [t for t in stoks[max(0, i - 3):i + 4] if t.kind == "num" or _content(t)]
        return any(t.kind == "num" for t in near)
    # direction words ("later", "longer") are read by the polarity check, never as labels trading places
    shared = [w for w in c_index if w in s_index and len(s_index[w]) == 1 and len(c_index[w]) == 1
              and w not in _POLAR_WORDS and label(w)]
    found = []
    for x in range(len(shared)):
        for y in range(x + 1, len(shared)):
            a, b = shared[x], shared[y]
            sa, sb = s_index[a][0], s_index[b][0]
            if abs(sa - sb) < 4:
                continue
            if _swapped(context(claim_toks, c_index[a][0], 3), context(claim_toks, c_index[b][0], 3),
                        context(stoks, sa, 3), context(stoks, sb, 3), margin=0.9):
                found.append(Finding("entity", f"{a!r} and {b!r} trade places: the source says "
                                               f"\"{C_clip(src.sentences[k])}\""))
                return found
    return found


def _titled(toks: list[Tok]) -> dict[str, str]:
    """Names with the common noun right before them ("the violinist Zoë Müller", "chief executive
    Marta Lindgren"): {first word of the name, lower case: the noun}."""
    out: dict[str, str] = {}
    for i in range(1, len(toks)):
        t, before = toks[i], toks[i - 1]
        if t.kind == "word" and t.text[:1].isupper() and before.kind == "word" and before.text.islower() \
                and _content(before) and before.low not in _RELATIONAL and before.low not in _STOP \
                and before.low not in _POLAR_WORDS and len(before.low) > 3:
            out.setdefault(t.low, before.low)
    return out


def check_title_swap(claim_toks: list[Tok], src: SourceIndex) -> list[Finding]:
    """Two people's titles traded: "the cellist Zoë Müller and the violinist Søren Ærø" where the
    source says "the violinist Zoë Müller and the cellist Søren Ærø": the source gives the name
    another title, and gives the claim's title to another name."""
    mine = _titled(claim_toks)
    if not mine:
        return []
    theirs: dict[str, set[str]] = {}
    for toks in src.toks:
        for name, title in _titled(toks).items():
            theirs.setdefault(name, set()).add(title)
    holders: dict[str, set[str]] = {}
    for name, titles in theirs.items():
        for title in titles:
            holders.setdefault(title, set()).add(name)
    for name, title in mine.items():
        said = theirs.get(name)
        if said and title not in said and holders.get(title, set()) - {name}:
            other = sorted(holders[title] - {name})[0]
            return [Finding("entity", f"{title!r} {name!r}: the source calls {name!r} {sorted(said)[0]!r} and "
                                      f"{other!r} {title!r}")]
    return []


# -- polarity ------------------------------------------------------------------------------------

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


def _pwords(text: str) -> set[str]:
    """Words that can carry polarity: capitalised words inside a sentence are names ("Lower
    Ashford"), except in a headline, where every word is capitalised. "more than 800 metres",
    "up to three days" state a quantity, not a direction (the multi-word pairs compare them)."""
    words = C._WORD.findall(text)
    heading = C.is_heading(text)
    out = set()
    for i, w in enumerate(words):
        low = w.lower().strip("'’")
        if low in _COMPARATIVE_Q and _quantity(words, i):
            continue
        if heading or i == 0 or not w[0].isupper():
            out.add(low)
    return out


def _bound(claim: str, mine: frozenset[str], clause: str, theirs: frozenset[str]) -> bool:
    """A direction word of the claim and an opposite word of the source clause are about the
    same thing: the same nearest content word before them (what rose or fell), or a number
    near both ("up 18 percent" / "rose by 18 percent")."""
    def ctxs(text: str, words: frozenset[str]) -> list[tuple[str, set[str]]]:
        toks = tokenize(text)
        out = []
        for i, t in enumerate(toks):
            if t.kind == "word" and t.low in words:
                left = next((stem(x.low) for x in reversed(toks[:i]) if _content(x) and x.low not in _RELATIONAL
                             and x.low not in _POLAR_WORDS), "")
                nums = {x.value for x in toks[max(0, i - 3):i + 4] if x.kind == "num"}
                out.append((left, nums))
        return out
    return any((la and la == lb) or (na & nb) for la, na in ctxs(claim, mine) for lb, nb in ctxs(clause, theirs))


def _neighbours(text: str, word: str) -> set[str]:
    """The nearest content word on each side of ``word`` (stems), and the numbers within three tokens."""
    toks = tokenize(text)
    out: set[str] = set()
    for i, t in enumerate(toks):
        if t.low != word:
            continue
        for rng in (range(i - 1, -1, -1), range(i + 1, len(toks))):
            for j in rng:
                x = toks[j]
                if x.kind == "punct" and x.text in ";:.!?":
                    break
                if x.kind == "word" and _content(x) and x.low not in _RELATIONAL:
                    out.add(stem(x.low))
                    break
        out |= {"#" + x.value for x in toks[max(0, i - 3):i + 4] if x.kind == "num"}
    return out


def _neighbours_bound(claim: str, word: str, clause: str, other: str) -> bool:
    """"coated cathode" / "uncoated cathode": the two words stand by the same word or number, so
    they say opposite things of one thing ("seeds had been treated" is not "untreated fields")."""
    return bool(_neighbours(claim, word) & _neighbours(clause, other))


#: Verbs that say "not" by themselves ("missed a message" = "did not receive a message").
_IMPLICIT_NEG = {"missed", "miss", "misses", "lacked", "lack", "lacks", "lacking", "omitted", "excluded", "skipped",
                 "absent", "unaware"}
_AUX = {"be", "been", "being", "have", "had", "has", "do", "did", "does", "get", "got", "yet", "always", "ever",
        "significantly", "really", "actually", "even", "quite", "entirely", "fully", "necessarily", "to"}
_QUANT_NO = {"almost", "nearly", "virtually", "practically", "little", "with"}


def _neg_cues(text: str, quantities: bool = False) -> list[tuple[str, str]]:
    """Negation cues with what each negates (the stem of the next content word): "did not
    know" -> ("not", "know"). "almost no trees", "with no trees" are quantities, not negation
    (listed too with ``quantities``: "with no loss" matches "without any loss")."""
    text = _SAME.sub(" SAMEMARK ", text)
    words = _words(text)
    out = []
    for i, w in enumerate(words):
        cue = w in _NEG_CUES or w.endswith("n't") or w.endswith("n’t")
        if not cue and w not in _IMPLICIT_NEG:
            continue
        if w in ("no", "none") and i > 0 and words[i - 1] in _QUANT_NO and not quantities:
            continue
        if w == "none" and ((i > 0 and words[i - 1] == "from") or words[i + 1:i + 2] == ["to"]):
            continue  # "ranging from none to 65 percent": zero, a quantity
        target = ""
        for nxt in words[i + 1:i + 5]:
            if nxt not in _STOP and nxt not in _AUX and nxt not in _NEG_CUES:
                target = stem(nxt)
                if nxt in META_VERBS:
                    target = "META"
                break
        if target != "META":  # "never discusses spent cells": about the document, not a fact of it
            out.append((w, target))
    return out


def _neg_parity(text: str, negated_in: str = "") -> int:
    """Parity of the negation cues of ``text``; a cue whose negated word ``negated_in`` also
    negates ("a worker who did not know the group" against the source's "did not know") is
    matched there and left out."""
    other = {t for _, t in _neg_cues(negated_in, quantities=True)} if negated_in else set()
    other |= {stem(w[2:]) for w in _words(negated_in) if w.startswith("un") and len(w) > 5}  # "untested"
    return sum(1 for _, t in _neg_cues(text) if not (t and t in other)) % 2


def check_polarity(claim: str, aligned_sentences: list[str]) -> list[Finding]:
    """Direction words, antonyms and negation of the claim against its aligned source clause."""
    if not C.is_heading(claim):  # a headline is compared with headlines; a sentence not with a headline's wording
        aligned_sentences = [s for s in aligned_sentences if not C.is_heading(s)]
    if not aligned_sentences:
        return []
    found = []
    region = " ".join(aligned_sentences[:2])
    region_words = set(_words(region))
    claim_words = _words(claim)
    cw = _pwords(claim)
    claim_clauses = clauses(claim) or [claim]
    for cl in claim_clauses:
        clause, score = _best_clause_of(cl, aligned_sentences[:3])
        if score <= 0.5:
            continue  # the claim's clause is not about this source clause
        clause_words = _pwords(clause)
        cl_words = _pwords(cl)
        for a, b in ANTONYMS:
            for mine, theirs in ((a, b), (b, a)):
                hit = cw & mine
                if not hit or not (cl_words & mine):
                    continue
                if (cl_words & theirs) and not _bound(cl, mine, clause, theirs):
                    continue  # "savings fell as prices rose": each word about its own thing
                if (clause_words & theirs) and not (clause_words & mine):
                    found.append(Finding("polarity", f"{sorted(hit)[0]!r} where the source says "
                                                     f"{sorted(clause_words & theirs)[0]!r}: \"{C_clip(clause)}\""))
                    break
            if found:
                return found
        # "un-" antonyms: coated/uncoated, treated/untreated
        clause_negated = {t for _, t in _neg_cues(clause)}
        claim_negated = {t for _, t in _neg_cues(cl)}
        for w in set(_words(cl)):
            if w.startswith("un") and stem(w[2:]) in clause_negated:
                continue  # "untested" where the source says "not tested"
            if ("un" + w) in clause_words and stem(w) in claim_negated:
                continue
            if w.startswith("un") and w[2:] in clause_words and w not in region_words \
                    and _neighbours_bound(cl, w, clause, w[2:]):
                return [Finding("polarity", f"{w!r} where the source says {w[2:]!r}: \"{C_clip(clause)}\"")]
            if ("un" + w) in clause_words and w not in clause_words and w not in region_words \
                    and _neighbours_bound(cl, w, clause, "un" + w):
                return [Finding("polarity", f"{w!r} where the source says {'un' + w!r}: \"{C_clip(clause)}\"")]
    joined = " ".join(claim_words)
    rjoined = " ".join(_words(aligned_sentences[0]))
    for mine, theirs in _MULTI_ANTONYMS:
        for m1, t1 in ((mine, theirs), (theirs, mine)):
            if " ".join(m1) in joined and " ".join(t1) in rjoined and " ".join(m1) not in rjoined:
                return [Finding("polarity", f"{' '.join(m1)!r} where the source says {' '.join(t1)!r}")]
    # negation, clause by clause
    for cl in claim_clauses:
        clause, score = _best_clause_of(cl, aligned_sentences[:3])
        if score <= 0.5:
            continue
        c_same, s_same = bool(_SAME.search(cl) or _SAME_WORDS.search(cl)), bool(_SAME.search(clause)
                                                                              or _SAME_WORDS.search(clause))
        if s_same and not c_same and _CHANGE_WORDS.search(cl) and not _neg_parity(cl):
            return [Finding("negation", f"the claim says it changed where the source says it did not: "
                                        f"\"{C_clip(clause)}\"")]
        if c_same and not s_same and _CHANGE_WORDS.search(clause) and not _SAME.search(cl):
            return [Finding("negation", f"the claim says it did not change where the source says it did: "
                                        f"\"{C_clip(clause)}\"")]
        if c_same or s_same:
            continue
        mine = _neg_parity(cl, negated_in=region + " " + clause)
        theirs = _neg_parity(clause, negated_in=claim)  # "..., with no loss of service" / "... without any loss"
        if mine != theirs:
            return [Finding("negation", f"the claim {'negates' if mine else 'affirms'} what the source "
                                        f"{'affirms' if mine else 'negates'}: \"{C_clip(clause)}\"")]
    return found


def _directions_near(toks: list[Tok], i: int, reach: int = 2) -> set[str]:
    """Direction words said of the number at token i: up to ``reach`` content words on each side,
    within its clause and before any other number ("kept 91 percent", "44 percent fewer",
    "a reduction of 44 percent"); "more than 40 percent" states a quantity, not a direction."""
    out: set[str] = set()
    for step in (-1, 1):
        j, d = i + step, 0
        while 0 <= j < len(toks) and d < reach:
            t = toks[j]
            if t.kind == "num" or (t.kind == "punct" and t.text in ",;:.!?()") or t.low in _CLAUSE_WORDS \
                    or t.low == "and":
                break
            if t.kind == "word" and t.low not in _STOP and t.low not in _RELATIONAL - {"up", "down", "over", "under",
                                                                                      "above", "below"}:
                d += 1
                if t.low in _POLAR_WORDS and not (t.low in _COMPARATIVE_Q and _quantity(toks, j)):
                    out.add(t.low)
            j += step
    return out


_TIMES_DOWN = r"(?:slower|less|lower|fewer|smaller|shorter|weaker|cheaper|worse)"
_TIMES_UP = r"(?:the|as|that|faster|more|higher|greater|larger|longer|stronger|bigger|better)"


def check_times(claim: str, src: SourceIndex) -> list[Finding]:
    """"1.6 times slower" where the source says "1.6 times the rate": a multiple above one
    is more, never less."""
    for m in re.finditer(rf"\b(\d+(?:\.\d+)?)\s+times\s+{_TIMES_DOWN}\b", claim, re.I):
        n = m.group(1)
        if float(n) <= 1:
            continue
        for k, x in enumerate(src.sentences):
            if re.search(rf"\b{re.escape(n)}\s+times\s+{_TIMES_UP}\b", x, re.I) \
                    and not re.search(rf"\b{re.escape(n)}\s+times\s+{_TIMES_DOWN}\b", x, re.I):
                return [Finding("polarity", f"{m.group(0)!r} where the source says a multiple above one: "
                                            f"\"{C_clip(x)}\"")]
    return []


def check_number_direction(claim_toks: list[Tok], src: SourceIndex) -> list[Finding]:
    """A number whose direction the source states: "23 percent fewer trips" told as "23 percent
    more", "kept 91 percent" as "lost 91 percent". Every place the source says the number (in the
    same unit) is read; the claim's direction word is wrong when the source puts only opposite
    words by that number and never one of the claim's side."""
    for u in number_uses(claim_toks):
        if _num_kind(u.value) != "amount":
            continue
        mine_words = _directions_near(claim_toks, u.index)
        if not mine_words:
            continue
        near: set[str] = set()
        ctx = _flat(context(claim_toks, u.index, width=6))
        places = [(k, su) for k, su in src.occurrences(u.value)
                  if not (u.unit and su.unit and u.unit != su.unit and "?" not in u.unit + su.unit)]
        fits = [_overlap(ctx, _flat(context(src.toks[k], su.index, width=6))) for k, su in places]
        for (k, su), fit in zip(places, fits):  # where the source says this number of the same thing
            if fit >= max(fits) - 0.25:
                near |= _directions_near(src.toks[k], su.index)
        if not near:
            continue
        for a, b in ANTONYMS:
            for mine, theirs in ((a, b), (b, a)):
                hit = mine_words & mine
                if hit and (near & theirs) and not (near & mine) and not (mine_words & theirs):
                    return [Finding("polarity", f"{sorted(hit)[0]!r} {u.value} where the source says "
                                                f"{sorted(near & theirs)[0]!r} {u.value}")]
    return []


#: Plain opposites of one word each: a claim word the source never uses, whose opposite it does
#: use, says the opposite of the source ("on very cold days" in a study of a heatwave, where the
#: body feels "how hot").
#: Only words of the weather and the body's sense of it: they are said literally. Words said of
#: rates and chances ("1.6 times faster" where the source has "slowly" of something else, "sleep
#: late" where it has "later") are paraphrased too freely for this.
_OPPOSITES = {a: b for x, y in (("hot", "cold"), ("warm", "cool"), ("wet", "dry"))
              for a, b in ((x, y), (y, x))}


def _opposite_base(word: str) -> str | None:
    """The plain word of an opposites pair a form belongs to: "colder" -> "cold", "drier" -> "dry"."""
    if word in _OPPOSITES:
        return word
    for base in _OPPOSITES:
        stem_ = base[:-1] if base.endswith("y") else base
        if word.startswith(stem_) and word[len(stem_):] in ("r", "st", "er", "est", "ly", "ier", "iest", "ily", "ter",
                                                             "test", "ness", "th"):
            return base
    return None


_ORDINAL = r"(?:second|third|fourth|fifth|2nd|3rd|4th|5th)"
_SUPERLATIVE = r"(?:largest|biggest|highest|greatest|most|main|leading|top|costliest|heaviest|longest|lowest|smallest)"


def check_rank(claim: str, sentences: list[str]) -> list[Finding]:
    """A rank dropped or changed: "Energy is the largest cost" where the source says "Energy is the
    second largest cost after staff"; "the third largest" where it says "the second largest"."""
    c = claim.lower()
    for x in sentences:
        for m in re.finditer(rf"\b({_ORDINAL})[\s-]+({_SUPERLATIVE})\s+(\w+)", x.lower()):
            rank, sup, noun = m.groups()
            said = re.search(rf"\b(?:({_ORDINAL})[\s-]+)?{sup}\s+(?:\w+\s+){{0,2}}?{re.escape(noun)}", c)
            if said and said.group(1) != rank:
                return [Finding("polarity", f"{(said.group(1) + ' ') if said.group(1) else ''}{sup} {noun} where "
                                            f"the source says {rank} {sup}: \"{C_clip(x)}\"")]
    return []


def check_opposite_word(claim: str, src: SourceIndex) -> list[Finding]:
    """A claim word of a plain opposites pair that the source never uses in any form, where it uses
    the opposite: "cold streets" against a source that speaks of "how hot the body feels" and
    "cooler" streets, never of cold ones."""
    used = {f for lw in src.lows for w in lw if (f := _opposite_base(w))}
    for w in _words(claim):
        base = _opposite_base(w)
        if base and base not in used and _OPPOSITES[base] in used:
            return [Finding("polarity", f"{w!r}: the source never says {base!r} in any form, only "
                                        f"{_OPPOSITES[base]!r}")]
    return []


#: Which way a direction word moves a number: "rose to 310", "cheaper: 38 versus 61".
_SIGN: dict[str, int] = {**{w: 1 for w in _UP.split()}, **{w: -1 for w in _DOWN.split()},
                         **{w: 1 for w in "dearer costlier pricier warmer hotter higher more greater".split()},
                         **{w: -1 for w in "cheaper cooler colder lower less fewer".split()}}
for _w in ("saving", "saved", "save", "cut", "cuts", "remove", "removed", "removing", "add", "added", "adding",
           "up", "down", "extend", "extended", "extends", "narrow"):
    _SIGN.pop(_w, None)  # "saved 310 euros", "cut 12 jobs", "added 38 million": an amount, not a level
_VERSUS = {"versus", "vs", "against"}


def _num(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


def _moves(toks: list[Tok]) -> dict[str, int]:
    """Which way the text says a number moved, as the level it ended at: "fell to 310", "from 450 to
    310", "310 euros, down from 450" (numbers compared by size where both are given)."""
    out: dict[str, int] = {}
    uses = number_uses(toks)
    for k, u in enumerate(uses):
        i = u.index
        before = [t for t in toks[max(0, i - 3):i] if t.kind == "word"]
        # "from 450 to 310", "from 21 percent to 39 percent"
        if k > 0 and toks[i - 1].low == "to" and any(t.low == "from" for t in toks[uses[k - 1].index - 1:uses[k - 1].index]) \
                and i - uses[k - 1].index <= 4:
            a, b = _num(uses[k - 1].value), _num(u.value)
            if a is not None and b is not None and a != b:
                out.setdefault(u.value, 1 if b > a else -1)
                continue
        # "fell to about 310", "rose to 39 percent"
        if before and before[-1].low in _APPROX | {"to"}:
            words = [t.low for t in before]
            if "to" in words:
                verb = words[:words.index("to")]
                if verb and verb[-1] in _SIGN:
                    out.setdefault(u.value, _SIGN[verb[-1]])
                    continue
        # "310 euros a year ..., down from 450 euros"
        for j in range(i + 1, min(len(toks), i + 16)):
            t = toks[j]
            if t.kind == "num" or (t.kind == "punct" and t.text in ";.!?") or t.low in _CLAUSE_WORDS:
                break
            if t.low in ("up", "down") and j + 2 < len(toks) and toks[j + 1].low == "from" and toks[j + 2].kind == "num":
                a, b = _num(toks[j + 2].value), _num(u.value)
                if a is not None and b is not None and a != b:
                    out.setdefault(u.value, 1 if b > a else -1)
                break
    return out


def check_moves(claim_toks: list[Tok], src: SourceIndex) -> list[Finding]:
    """A level the claim says a number moved to the other way from the source: "savings rose to
    about 310 euros" where the source says "310 euros, down from 450"; and a claim whose direction
    word goes against its own numbers ("fell from 21 to 39 percent")."""
    mine = _moves(claim_toks)
    if not mine:
        return []
    uses = number_uses(claim_toks)
    for k, u in enumerate(uses[1:], 1):  # the claim against itself: "fell from 21 to 39 percent"
        if u.value not in mine or claim_toks[u.index - 1].low != "to":
            continue
        before = [t.low for t in claim_toks[max(0, uses[k - 1].index - 3):uses[k - 1].index] if t.kind == "word"]
        at = before.index("from") if "from" in before else 0
        if at > 0 and _SIGN.get(before[at - 1], mine[u.value]) != mine[u.value]:
            return [Finding("polarity", f"{before[at - 1]!r} from {uses[k - 1].value} to {u.value}")]
    theirs: dict[str, set[int]] = {}
    for toks in src.toks:
        for value, sign in _moves(toks).items():
            theirs.setdefault(value, set()).add(sign)
    for value, sign in mine.items():
        said = theirs.get(value, set())
        if said and sign not in said:
            return [Finding("polarity", f"the claim has {value} as a {'rise' if sign > 0 else 'fall'}; the source "
                                        f"says it {'fell' if sign > 0 else 'rose'} to {value}")]
    return []


def check_versus(claim_toks: list[Tok]) -> list[Finding]:
    """A comparison that goes against its own figures: "Dearer than lithium iron phosphate: 38
    versus 61 dollars" (the first figure is the subject's, the second the other's)."""
    for i, t in enumerate(claim_toks):
        if t.kind != "word" or t.low not in _SIGN or i + 1 >= len(claim_toks) or claim_toks[i + 1].low != "than":
            continue
        nums = [j for j in range(i + 2, min(len(claim_toks), i + 14)) if claim_toks[j].kind == "num"]
        if len(nums) < 2 or not any(claim_toks[j].low in _VERSUS for j in range(nums[0] + 1, nums[1])) \
                or nums[1] - nums[0] > 4:
            continue
        a, b = _num(claim_toks[nums[0]].value), _num(claim_toks[nums[1]].value)
        if a is None or b is None or a == b:
            continue
        if (a > b) != (_SIGN[t.low] > 0):
            return [Finding("polarity", f"{t.text!r} than the other, yet {claim_toks[nums[0]].text} against "
                                        f"{claim_toks[nums[1]].text}")]
    return []


#: Verbs that carry no direction of their own: "attendance went down" is about attendance.
_LIGHT = {"went", "go", "goes", "going", "gone", "got", "get", "gets", "became", "become", "becomes", "been", "be",
          "being", "made", "make", "makes", "felt", "feel", "feels", "seem", "seemed", "seems", "appeared", "appears",
          "remained", "stayed", "came", "come", "much", "far", "sharply", "slightly", "significantly", "even",
          "still", "considerably", "substantially", "markedly", "only", "average"}


_LIGHT_STEMS = {stem(w) for w in _LIGHT}


def _anchors(toks: list[Tok], i: int, reach: int = 2, heading: bool = False) -> set[str]:
    """What a direction word at token i is said of: the nearest ``reach`` content words before it
    (its subject: "attendance went down", "organic sales growth") and after it (its object: "cut
    its forecast", "falling steel prices"), within its clause; light verbs and other direction
    words skipped."""
    out: set[str] = set()
    for rng in (range(i - 1, -1, -1), range(i + 1, len(toks))):
        taken = 0
        for j in rng:
            x = toks[j]
            if (x.kind == "punct" and x.text in ",;:.!?()") or x.low in ("and", "or") or x.low in _CLAUSE_WORDS:
                break  # "colony growth and queen production": growth is not said of queens
            if x.kind == "word" and x.low in _STEERING and j != i and not (x.low in _COMPARATIVE_Q and _quantity(toks, j)):
                break  # "earlier studies of later school starts": what follows "later" is said of "later"
            if x.kind == "word" and _content(x) and x.low not in _RELATIONAL and x.low not in _LIGHT \
                    and x.low not in _POLAR_WORDS and x.low not in _CLAUSE_WORDS and x.low not in _PERCENT:
                if x.text[:1].isupper() and j > 0 and not heading:
                    continue  # a name ("Lumen Foods grew" / "Shares in Lumen Foods fell"): a company does many things
                out.add(lemma(x.low))
                taken += 1
                if taken >= reach:
                    break
    return out  # numbers are no anchor here: check_number_direction reads them, with their units


def _direction_uses(text: str, words: frozenset[str]) -> list[set[str]]:
    return [anchors for _, anchors in _direction_words(text, words)]


@functools.lru_cache(maxsize=8192)
def _direction_words(text: str, words: frozenset[str]) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each direction word of ``words`` in ``text`` with what it is said of (its anchors).
    Cached: check_bound_direction reads every source sentence for each antonym pair and claim."""
    toks = tokenize(text)
    heading = C.is_heading(text)
    out = []
    for i, t in enumerate(toks):
        if t.kind != "word" or t.low not in words or (t.text[:1].isupper() and i > 0 and not heading):
            continue
        if t.low in _COMPARATIVE_Q and _quantity(toks, i):
            continue  # "more than 800 metres": a quantity
        if any(x.low in _NEG_CUES or x.low.endswith(("n't", "n’t")) for x in toks[max(0, i - 3):i]):
            continue  # "did not die": a negated direction is the negation checks' business
        out.append((t.low, frozenset(_anchors(toks, i, heading=heading))))
    return tuple(out)


_PLACE_WORDS = frozenset({"before", "after", "over", "under", "above", "below", "within", "first", "last", "exceeds",
                          "exceeded", "inside", "outside", "indoor", "indoors", "outdoor", "outdoors"})
_SIZE_WORDS = frozenset({"longer", "shorter", "larger", "bigger", "smaller", "wider", "narrower", "narrow", "widened",
                         "narrowed", "extend", "extended", "extends"})


def check_bound_direction(claim: str, sentences: list[str], everywhere: list[str] | None = None) -> list[Finding]:
    """A direction word said of the same thing as an opposite word of the source: "attendance went
    down" where the source says "attendance rose". Only when the source never says the claim's
    direction of that thing and the claim does not say both (each word about its own thing)."""
    # a headline states facts too ("... but Cuts Margin Forecast"): its words are read like a sentence's
    # the same direction of that thing anywhere in the document clears it (the opposite is read in
    # the aligned sentences only: "revenue grew" is not about "shares fell")
    anywhere = list(everywhere or []) or sentences
    pool = list(sentences)
    for a, b in ANTONYMS:
        generic = a is ANTONYMS[0][0]
        if generic:  # "fewer trips" is not opposite to "trips ... longer": sizes have their own pairs
            a, b = a - _SIZE_WORDS, b - _SIZE_WORDS
        # "sleep after a later start" / "schools start before...": places in time or space, not directions
        a, b = a - _PLACE_WORDS, b - _PLACE_WORDS
        if not a or not b:
            continue
        for mine, theirs in ((a, b), (b, a)):
            for said, anchors in _direction_words(claim, mine):
                if not anchors:
                    continue
                # and any sentence that shares three content words (all of them, if fewer) with the
                # claim's clause of that word
                part = next((c for c in clauses(claim) if re.search(rf"\b{said}\b", c.lower())), claim)
                words = {stem(w) for w in _words(part) if w not in _STOP and w not in _POLAR_WORDS and len(w) > 2
                         and w not in _LIGHT and stem(w) not in _LIGHT_STEMS}
                need = max(2, min(3, len(words)))
                # ... or whose own direction word is said of two of the same things ("earlier school
                # start" / "earlier studies of later school start times"), or, for a pair of its own
                # ("faster"/"slower", not the many words of up and down), of everything the claim's is
                # said of ("Faster foraging" / "Slower foraging rather than extra deaths")
                pool = list(sentences) + [x for x in anywhere if x not in sentences
                                          and (len(words & {stem(w) for w in _words(x)}) >= need
                                               or any(len(anchors & o) >= 2 or (not generic and anchors <= o)
                                                      for o in _direction_uses(x, theirs)))]
                if any(anchors & other for other in _direction_uses(claim, theirs)):
                    continue
                opposite = [x for x in pool if any(anchors & o for o in _direction_uses(x, theirs))]
                # the source saying the claim's direction of that thing clears it, unless the opposite is
                # said of more of it ("Trees Reduce Pedestrian Heat Stress" against "heatwaves are more
                # frequent and pedestrians feel the heat far more")
                bind_opp = max((len(anchors & o) for x in opposite for o in _direction_uses(x, theirs)), default=0)
                bind_same = max((len(anchors & o) for x in anywhere for o in _direction_uses(x, mine)), default=0)
                if opposite and bind_opp > bind_same and (not bind_same or bind_opp >= 3):
                    return [Finding("polarity", f"{said!r} said of what the source says the "
                                                f"opposite of: \"{C_clip(opposite[0])}\"")]
    return []


def _window(toks: list[Tok], i: int, n: int = 3) -> set[str]:
    """Up to n content words on each side of token i within its clause (lemmas), and numbers."""
    out: set[str] = set()
    for rng in (range(i - 1, -1, -1), range(i + 1, len(toks))):
        d = 0
        for j in rng:
            x = toks[j]
            if (x.kind == "punct" and x.text in ";:.!?()") or d >= n:
                break
            if x.kind == "num":
                out.add("#" + x.value)
                d += 1
            elif x.kind == "word" and _content(x) and x.low not in _RELATIONAL and x.low not in _LIGHT:
                out.add(lemma(x.low))
                d += 1
    return out


_NO_TARGET = {"chang", "diffe", "vary", "varie", "SAMEMARK".lower()[:5], "samem", "only", "just", "also", "about",
              "more", "less", "fewer", "even", "until"}


def _targets(text: str) -> list[tuple[int, str]]:
    """Negated words: (token index of the word a real negation cue negates, its stem)."""
    toks = tokenize(_SAME.sub(" SAMEMARK ", text))
    out = []
    for i, t in enumerate(toks):
        if t.kind != "word" or not (t.low in ("not", "never", "cannot") or t.low.endswith("n't")
                                    or t.low.endswith("n’t")):
            continue  # "no secure parking", "without reminders" negate a thing, not what is said of it
        for j in range(i + 1, min(len(toks), i + 5)):
            x = toks[j]
            if x.kind != "word":
                break
            if x.low not in _STOP and x.low not in _AUX and x.low not in _NEG_CUES:
                if stem(x.low) not in _NO_TARGET and x.low not in META_VERBS:
                    out.append((j, stem(x.low)))
                break
    return out


def negated_stems(sentences: list[str]) -> set[str]:
    """Every word some sentence negates ("could not read"), or says with un- ("untreated")."""
    out: set[str] = set()
    for x in sentences:
        out |= {t for _, t in _targets(x)} | {stem(w[2:]) for w in _words(x) if w.startswith("un") and len(w) > 5}
    return out


def check_negation_targets(claim: str, sentences: list[str], everywhere: set[str] | None = None) -> list[Finding]:
    """Negation read word by word: the claim negates a word the source says plainly of the same
    things ("will not protect about 11,000 homes" / "protect about 11,000 homes"), or says plainly
    what the source negates ("a field worker who did know the group" / "who did not know").
    A word negated in both, or said plainly in both, is no flip; nor is one the source says both ways."""
    sentences = [x for x in sentences if not C.is_heading(x)]
    if not sentences:
        return []
    ctoks = tokenize(_SAME.sub(" SAMEMARK ", claim))
    c_neg = _targets(claim)
    c_neg_stems = {t for _, t in c_neg}
    c_un = {stem(w[2:]) for w in _words(claim) if w.startswith("un") and len(w) > 5}
    s_data = []
    for x in sentences:
        stoks = tokenize(_SAME.sub(" SAMEMARK ", x))
        negs = _targets(x)
        s_data.append((x, stoks, negs, {t for _, t in negs}
                       | {stem(w[2:]) for w in _words(x) if w.startswith("un") and len(w) > 5}))
    all_neg = set().union(*(d[3] for d in s_data)) | (everywhere or set())
    # the claim negates what the source says plainly
    for ci, t in c_neg:
        if t in all_neg:
            continue
        mine = _window(ctoks, ci)
        for x, stoks, negs, neg_stems in s_data:
            for si, st in enumerate(stoks):
                if st.kind == "word" and stem(st.low) == t and (_window(stoks, si) & mine):
                    return [Finding("negation", f"the claim negates {ctoks[ci].low!r} where the source says it: "
                                                f"\"{C_clip(x)}\"")]
    # the claim says plainly what the source negates
    for x, stoks, negs, neg_stems in s_data:
        for si, t in negs:
            if t in c_neg_stems or t in c_un:
                continue
            theirs = _window(stoks, si)
            for ci, ct in enumerate(ctoks):
                if ct.kind == "word" and stem(ct.low) == t and (_window(ctoks, ci) & theirs):
                    return [Finding("negation", f"the claim affirms {ct.low!r} where the source negates it: "
                                                f"\"{C_clip(x)}\"")]
    return []


_BE = {"is", "are", "was", "were", "be", "been", "being"}


def check_only_negated(claim: str, src: SourceIndex) -> list[Finding]:
    """A quality the claim affirms ("they are easy") that the source only ever denies ("The change
    was not easy to implement"), never says plainly: the claim says what the source says is not so,
    whatever its subject is called ("they", "later starts")."""
    ctoks = tokenize(claim)
    negated_here = {t for _, t in _targets(claim)}
    for i, t in enumerate(ctoks[1:], 1):
        if t.kind != "word" or ctoks[i - 1].low not in _BE or t.low in _STOP or t.low in _AUX or len(t.low) < 3:
            continue
        st = stem(t.low)
        if st in negated_here or st not in src.negated or st in _NO_TARGET:
            continue
        if st not in src.plain:
            return [Finding("negation", f"the claim says {t.low!r}; the source only ever says it is not")]
    return []


# -- refusals ---------------------------------------------------------------------------------------

_REFUSAL_PASSIVE = re.compile(
    r"^(.*?)\b(?:(?:is|are|was|were)\s+(?:not|never)|(?:isn't|aren't|wasn't|weren't))\s+(?:\w+ly\s+)?(?:mentioned|"
    r"discussed|covered|addressed|given|stated|included|reported|named|listed|described)\b.*\b(?:document|paper|"
    r"article|report|policy|manual|text|notes|study|source)\b", re.I)
_REFUSAL_NONE = re.compile(r"^(?:there\s+is\s+|there's\s+)?no\s+(.*?)\s+(?:is\s+|are\s+)?(?:\w+\s+)?anywhere\s+"
                           r"in\s+the\s+(?:document|paper|article|report|policy|manual|text|notes|study|source)\b",
                           re.I)


_DOC = r"(?:document|paper|article|report|review|policy|manual|guide|text|notes|study|source|page|file|story|memo|release|piece|it)"
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
_META_PARTICIPLES = "|".join(sorted(w for w in META_VERBS if w.endswith(("ed", "en", "ned"))))
_REFUSAL_IT = re.compile(
    rf"^(?:it|the\s+{_DOC}|this\s+{_DOC})\s+(?:\w+\s+){{0,1}}?(?:never|doesn't|doesn’t|does\s+not|did\s+not|didn't)\s+"
    rf"(?:\w+ly\s+)?(?:{'|'.join(sorted(META_VERBS))})\b(.*)$", re.I)
_REFUSAL_PASSIVE_BARE = re.compile(
    r"^(.*?)\b(?:(?:is|are|was|were)\s+(?:not|never)|(?:isn't|aren't|wasn't|weren't|isn’t|aren’t))\s+(?:\w+ly\s+)?"
    rf"(?:{_META_PARTICIPLES})"
    r"(?:\s+(?:anywhere|at\s+all|in\s+it|there))?\s*[.!]?\s*$", re.I)
_REFUSAL_NO_X = re.compile(r"^(?:there\s+(?:is|are)\s+)?no\s+(.*?)\s+(?:is|are|was|were)\s+(?:\w+ly\s+)?"
                           rf"(?:{_META_PARTICIPLES})\b", re.I)
_NEG_WORD = re.compile(r"\b(?:no|not|never|nothing|none|nowhere|isn't|isn’t|doesn't|doesn’t|don't|can't|cannot|"
                       r"won't|hasn't|haven't|n't)\b|n't\b|n’t\b", re.I)
_META_Q = re.compile(r"\b(?:question|answer|answers|answered|answering)\b", re.I)


def refusal_topic(claim: str) -> list[str] | None:
    """For "the document doesn't say X" ("X is not mentioned in the paper", "there is no X
    anywhere in the manual", "it never names a make", "no brands are named", "nothing in the text
    answers that question"): X's content words (maybe none); None if not a refusal."""
    text = claim.strip()
    m = (_REFUSAL.match(text) or _REFUSAL_PASSIVE.match(text) or _REFUSAL_NONE.match(text)
         or _REFUSAL_IT.match(text) or _REFUSAL_PASSIVE_BARE.match(text) or _REFUSAL_NO_X.match(text))
    if m:
        rest = m.group(1)
    elif _META_Q.search(text) and _NEG_WORD.search(text):
        rest = ""  # a sentence about the question going unanswered: "that question isn't answered anywhere in it"
    else:
        return None
    return [w for w in _words(rest) if w not in _TOPIC_STOP and w not in META_WORDS and len(w) > 2]


_REFUSAL_TAIL = re.compile(r"\s*(?:;|:|\s[-–—]\s|,\s*(?:but|and|though|although)\s+(?=it\b|the\b|they\b|this\b))\s*", re.I)


def split_refusal(claim: str) -> list[str]:
    """"The document doesn't say which species; it measures how much cooler streets were": the
    refusal and what the reply says of the document are two claims, each judged on its own (a
    refusal is no licence to misstate the rest)."""
    parts = _REFUSAL_TAIL.split(claim.strip(), maxsplit=1)
    if len(parts) == 2 and refusal_topic(parts[0]) is not None and len(C._WORD.findall(parts[1])) >= 3:
        rest = parts[1].strip()
        return [parts[0].strip(), rest[:1].upper() + rest[1:]]
    return [claim]


_AFFIRM = re.compile(
    rf"^(?:{_DOC}|the\s+{_DOC}|this\s+{_DOC})\b(?:[^;.]*?\band)?\s+(?:(?:does|did|also|still|even|only)\s+)*"
    rf"(?:{'|'.join(sorted(META_VERBS))})\b(.*)$", re.I)


def affirmed_topic(claim: str) -> list[str] | None:
    """For "the document does say how batteries are recycled", "it still names a make of heat
    pump", "the paper tests a cathode and discusses spent cells": what the reply says the
    document speaks of (content words); None when the claim is not about the document."""
    m = _AFFIRM.match(claim.strip())
    if not m or refusal_topic(claim) is not None:
        return None
    return [w for w in _words(m.group(1)) if w not in _TOPIC_STOP and w not in META_WORDS and len(w) > 2]


def check_affirmed(topic: list[str], src: SourceIndex) -> Finding | None:
    """A claim that the document speaks of X is false when no source sentence holds what X is about."""
    if len(topic) < 2:
        return None
    absent = [w for w in topic if not (word_keys(w) & src.all_keys)]
    if absent and check_refusal(topic, src) is None:  # "covers its quarterly results": loose words, all the source's
        return Finding("refusal", f"says the document speaks of {' '.join(topic)}, but no source sentence does "
                                  f"(it never uses {', '.join(repr(w) for w in absent[:3])})")
    return None


def check_refusal(topic: list[str], src: SourceIndex) -> Finding | None:
    """A refusal is contradicted when one source sentence holds (nearly) all it is about."""
    if not topic:
        return None
    words = {lemma(w): w for w in topic if w not in _RELATIONAL}
    keys = [word_keys(w) for w in words.values()]
    need = len(keys) if len(keys) <= 2 else max(2, int(len(keys) * 0.75 + 0.999))
    for k, sk in enumerate(src.sentence_keys):
        if keys and sum(1 for ks in keys if ks & sk) >= need:
            return Finding("refusal", f"the source does say it: \"{C_clip(src.sentences[k])}\"")
    return None
