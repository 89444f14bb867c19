"""Which language detector is right on short replies? (issue 23, ``reply.language``)

    PYTHONPATH=$PWD python bench/bench_language.py

Runs each detector over ``bench/language_replies.py`` (short and long replies in en, es, fr,
de, pt, it, and replies in neighbouring languages that must not be taken for one of them) and
prints accuracy, the time to load and to detect, and the memory the detector added. The
function-word detector the check used before issue 23 is kept here, as it was, for the
comparison. Results: bench/RESULTS.md, "reply.language: the detector".
"""

from __future__ import annotations

import re
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from language_replies import LONG, OTHER, SHORT  # noqa: E402

SIX = ("en", "es", "fr", "de", "pt", "it")

# ---- the hand-written detector of harness/checks/form.py before issue 23 (verbatim) --------
STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset("the and of to in is that for it with as was on are be this by not or have from but "
                    "you they we his her at an which their can will would there".split()),
    "es": frozenset("el la de que y en los las un una por con para es del se no al lo como más pero sus "
                    "le ya o este sí porque esta entre cuando muy sin sobre también puedes este".split()),
    "fr": frozenset("le la les de des et en un une du est que qui dans pour pas sur au avec ce se plus "
                    "par sont mais ou il elle nous vous ils ne cette aux".split()),
    "de": frozenset("der die das und ist nicht ein eine zu den mit von sich des auf für im dem es auch "
                    "als an wie aus bei nach wird sind oder einer kann".split()),
    "pt": frozenset("o a os as de que e do da em um uma para com não por mais dos das se na no ao mas "
                    "como foi ele ela isso você".split()),
    "it": frozenset("il lo la gli le di che e è un una per con non si del della dei in da al sono ma come "
                    "anche più questo questa".split()),
}
WORD_RE = re.compile(r"[^\W\d_]+", re.U)


def old_detect(text: str) -> str | None:
    words = [w.lower() for w in WORD_RE.findall(text)]
    hits = {code: sum(1 for w in words if w in stops) for code, stops in STOPWORDS.items()}
    if sum(hits.values()) == 0:
        return None
    return max(hits, key=hits.get)


# ---- the candidates ----------------------------------------------------------------------


def lingua_detector(codes: tuple[str, ...] | None) -> Callable[[str], str | None]:
    from lingua import IsoCode639_1, LanguageDetectorBuilder

    if codes is None:
        detector = LanguageDetectorBuilder.from_all_languages().build()
    else:
        detector = LanguageDetectorBuilder.from_iso_codes_639_1(
            *(getattr(IsoCode639_1, c.upper()) for c in codes)).build()

    def detect(text: str) -> str | None:
        lang = detector.detect_language_of(text)
        return lang.iso_code_639_1.name.lower() if lang is not None else None

    return detect


def langid_detector(codes: tuple[str, ...] | None) -> Callable[[str], str | None]:
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    ident = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
    if codes is not None:
        ident.set_languages(list(codes))

    def detect(text: str) -> str | None:
        return ident.classify(text)[0]

    return detect


#: Neighbours of the six, so that a Dutch or Catalan reply is named as such, not as de or es.
NEIGHBOURS = SIX + ("nl", "ca", "ro", "da", "sv", "nb", "pl", "id", "ms", "tl", "af", "sq", "eu", "la", "eo")
#: The European languages closest to the six (Latin script), the fewest that name the others.
EUROPEAN = SIX + ("nl", "ca", "ro", "da", "sv", "pl")

DETECTORS: dict[str, Callable[[], Callable[[str], str | None]]] = {
    "function words (before)": lambda: old_detect,
    "lingua, the six": lambda: lingua_detector(SIX),
    "lingua, six + 15 neighbours": lambda: lingua_detector(NEIGHBOURS),
    "lingua, six + 6 European": lambda: lingua_detector(EUROPEAN),
    "py3langid, six + 6 European": lambda: langid_detector(EUROPEAN),
    "py3langid, the six": lambda: langid_detector(SIX),
    "py3langid, all 97": lambda: langid_detector(None),
}


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def score(detect: Callable[[str], str | None]) -> dict[str, object]:
    short = [(lang, t) for lang, texts in SHORT.items() for t in texts]
    long = [(lang, t) for lang, texts in LONG.items() for t in texts]
    times: list[float] = []

    def run(text: str) -> str | None:
        t0 = time.perf_counter()
        got = detect(text)
        times.append(time.perf_counter() - t0)
        return got

    short_wrong = [(lang, t, run(t)) for lang, t in short]
    short_wrong = [w for w in short_wrong if w[0] != w[2]]
    long_wrong = [(lang, t, run(t)) for lang, t in long]
    long_wrong = [w for w in long_wrong if w[0] != w[2]]
    other_six = [(lang, t, got) for lang, t in OTHER if (got := run(t)) in SIX]
    return {"short": f"{len(short) - len(short_wrong)}/{len(short)}", "long": f"{len(long) - len(long_wrong)}/{len(long)}",
            "other": f"{len(OTHER) - len(other_six)}/{len(OTHER)}", "median_ms": statistics.median(times) * 1000,
            "short_wrong": short_wrong, "other_six": other_six}


def main(names: list[str]) -> None:
    for name in names or list(DETECTORS):
        before = rss_mb()
        t0 = time.perf_counter()
        detect = DETECTORS[name]()
        detect("warm up: the first call loads the models")
        load_s = time.perf_counter() - t0
        r = score(detect)
        print(f"| {name} | {r['short']} | {r['long']} | {r['other']} | {load_s:.2f} s | {r['median_ms']:.2f} ms "
              f"| +{rss_mb() - before:.0f} MB |")
        for lang, text, got in r["short_wrong"]:
            print(f"    short {lang} {text!r} -> {got}")
        for lang, text, got in r["other_six"]:
            print(f"    other {lang} {text!r} -> {got}")


if __name__ == "__main__":
    main(sys.argv[1:])
