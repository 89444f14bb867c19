"""Language guess (English vs Spanish/French/German/Portuguese/Italian) and gibberish test.

Deliberately small: stop-word counting plus a few orthographic hints. Links are removed
before anything is counted.
"""

from __future__ import annotations

import re
import unicodedata

_URLISH = re.compile(r"\S*(?:://|www\.|\.[a-z]{2,4}/)\S*", re.I)
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?", re.U)

ENGLISH = frozenset("""
a about above after again all also am an and any are as at be because been before being
below between both but by can could did do does doing down during each few for from further
had has have having he her here hers him his how i i'm if in into is it it's its itself just
me more most my no nor not now of off on once only or other our out over own please same she
should so some such than that the their them then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you
your yours hi hello hey thanks thank yes ok okay summarize summarise summary document doc
paper article link post write make send give short brief version read file page pdf html text
report notes help start stop cancel want need could can't don't i'd i'll let's new latest our
platform twitter linkedin facebook instagram whatsapp tweet something quick good great
""".split())

_FOREIGN_RAW: dict[str, str] = {
    "es": """el la los las un una unos unas y o pero de del al en con por para que qué es son
          está están este esta estos estas ese esa eso mi mis tu tus su sus lo le les se nos
          como cómo cuando dónde muy más también ya hola gracias favor resume resumir resumen
          documento enlace publicación puedes puede quiero necesito sobre hacer haz yo usted""",
    "fr": """le la les un une des et ou mais de du au aux en avec pour par que qui est sont ce
          cet cette ces mon ma mes ton ta tes son sa ses leur nous vous ils elle je tu il très
          plus aussi bonjour salut merci s'il plaît résume résumer résumé document lien pour
          publication peux pouvez veux voudrais sur faire fais moi""",
    "de": """der die das den dem des ein eine einen einem einer und oder aber von zu mit für
          auf ist sind nicht ich du er sie wir ihr mein meine dein deine sein seine bitte danke
          hallo guten tag fasse zusammen zusammenfassung zusammenfassen dokument dieses diese
          dieser kannst können möchte über machen mach mir auch sehr noch""",
    "pt": """o a os as um uma uns umas e ou mas de do da dos das em no na nos nas com por para
          que é são está este esta isso meu minha seu sua você olá obrigado obrigada favor
          resuma resumir resumo documento link publicação pode quero preciso sobre fazer faça""",
    "it": """il lo la i gli le un uno una e o ma di del della dei delle in nel nella con per
          che è sono questo questa quello quella mio mia tuo tua suo sua ciao grazie favore
          riassumi riassumere riassunto documento collegamento pubblicazione puoi può voglio
          vorrei sopra fare fai mi anche molto""",
}
#: Words that are also English (or too ambiguous) never count as foreign evidence.
FOREIGN = {lang: frozenset(w for w in raw.split() if w not in ENGLISH
                           and w not in {"a", "i", "o", "e", "in", "link", "die", "also", "an"})
           for lang, raw in _FOREIGN_RAW.items()}
#: Strong markers count double.
_STRONG = frozenset("""hola gracias bonjour merci danke hallo olá obrigado obrigada ciao grazie
                    resume resumir resumen résume résumer résumé fasse zusammenfassung resuma
                    riassumi riassunto por para pour für questo""".split())
_HINT_CHARS = {"es": "ñ¿¡", "de": "ßäöü", "pt": "ãõ", "fr": "œ", "it": ""}


def strip_links(text: str) -> str:
    return _URLISH.sub(" ", text or "")


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(strip_links(text))]


def detect(text: str) -> str:
    """'en' or one of 'es', 'fr', 'de', 'pt', 'it'. Unknown/neutral text counts as 'en'."""
    ws = words(text)
    en = sum(1 for w in ws if w in ENGLISH)
    lowered = strip_links(text).lower()
    best, best_score = "en", 0
    for lang, vocab in FOREIGN.items():
        score = sum(2 if w in _STRONG else 1 for w in ws if w in vocab)
        score += sum(1 for ch in _HINT_CHARS[lang] if ch in lowered)
        if score > best_score:
            best, best_score = lang, score
    if best_score >= 2 and best_score > en:
        return best
    return "en"


def is_english(text: str) -> bool:
    return detect(text) == "en"


_VOWELS = set("aeiouyàáâäãåèéêëìíîïòóôöõùúûü")


def _implausible(word: str) -> bool:
    w = word.lower()
    if len(w) < 3:
        return False
    vowels = sum(1 for c in w if c in _VOWELS)
    if vowels == 0:
        return True
    if re.search(r"(.)\1\1", w):
        return True
    if re.search(r"[^aeiouy\W]{5,}", w):  # five consonants in a row
        return True
    if len(w) >= 6 and vowels / len(w) < 0.1:
        return True
    if not w.isascii():
        return False
    if len(w) >= 4 and w[0] not in _VOWELS and w[1] not in _VOWELS and w[:2] not in _ONSETS:
        return True
    for run in re.findall(r"[^aeiouy]{3,}", w):
        if sum(1 for c in run if c in "lrsnthmpcg") < 2 and not any(
                run in c or c in run for c in _CLUSTERS):
            return True
    return False


_ONSETS = frozenset("""bl br ch cl cr dr dw fl fr gh gl gn gr kl kn kr ph pl pr ps sc sh sk sl sm
                    sn sp sq st sv sw th tr ts tw wh wr rh sch""".split())
_CLUSTERS = ("str", "spr", "scr", "spl", "squ", "thr", "chr", "sch", "phr", "shr", "nth", "ngth",
             "ght", "nch", "nst", "rst", "rth", "mpl", "mpt", "ncl", "ndr", "ntr", "nct", "lth",
             "rch", "tch", "dth", "fth", "xth", "ckl", "ckn", "nds", "nts", "rds", "rts", "lds",
             "rld", "rns", "rms", "lms", "lls", "ssl", "stl", "ffl", "ggl", "ppl", "ttl", "bbl",
             "ddl", "zzl", "ngl", "ngs", "nks", "rks", "lks", "cts", "pts", "sts", "sps", "rtl",
             "rdl", "ndl", "ntl", "mbl", "mbr", "ncr", "nsl", "nsc", "nsf", "nsp", "bst", "pst",
             "xpl", "xpr", "xtr", "xcl", "lst", "rgl", "rbl", "rkl", "rpr", "rtr", "ltr", "ldr",
             "wkw", "wsp", "wnl", "whr", "shm", "ths", "ghts", "lph", "mph", "nph", "rph", "sph")


def is_gibberish(text: str) -> bool:
    """Not language: emoji/symbols only, or random letters with no known English word."""
    t = strip_links(text)
    letters = [c for c in t if unicodedata.category(c).startswith("L")]
    visible = [c for c in t if not c.isspace()]
    if not letters:
        return True  # emoji, punctuation or digits only
    ws = words(t)
    if any(w in ENGLISH for w in ws):
        return False
    if detect(t) != "en":
        return False  # a real foreign language is language
    if len(letters) < 0.5 * len(visible):
        return True  # mostly non-letters
    long_words = [w for w in ws if len(w) >= 3]
    if not long_words:
        return len(letters) < 3
    bad = sum(1 for w in long_words if _implausible(w))
    return bad * 2 > len(long_words) or (len(long_words) == 1 and bad == 1)
