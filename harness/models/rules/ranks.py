"""Ranks: "the largest cost" where the source says "the second largest"; "the third largest" where it
says "the second largest".
"""

from __future__ import annotations

import re

from harness.models.rules.pair import rule, Twin
from harness.models.rules.text import C_clip, Finding


_ORDINAL = r"(?:second|third|fourth|fifth|2nd|3rd|4th|5th)"


_SUPERLATIVE = r"(?:largest|biggest|highest|greatest|most|main|leading|top|costliest|heaviest|longest|lowest|smallest)"


@rule("rank", lambda p: (p.claim, p.texts(p.aligned)))
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


#: Wrong claims this module's rules must flag, each with the right twin they must pass.
TWINS = (
    Twin("rank", "Fuel is the second largest cost after crew wages.",
         wrong="Fuel is the company's largest cost, ahead of wages.", right="Fuel is the company's second-largest cost.",
         note="a rank dropped"),
    Twin("rank", "Fuel is the second largest cost after crew wages.",
         wrong="Fuel is the third largest cost.", right="Crew wages cost more than fuel.", note="a rank changed"),
)
