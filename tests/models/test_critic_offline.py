"""The offline critic reads meaning: for every rule, wrong answers that must fail and the
faithful answer that must pass (hash embedder: the rules, not the embedding, decide)."""

from __future__ import annotations

import pytest

from harness.models import claim_pairs as P
from harness.models import claims as C
from harness.models.critic_offline import OfflineCritic
from harness.models.embedder import hash_embedder

TRIAL = (
    "Treatment completion was 87 percent in the reminder group and 71 percent in the usual care group. "
    "The coated cathode retained 91 percent of its capacity, while the uncoated control retained only 64 percent. "
    "Students at schools that started later slept 34 minutes longer on school nights. "
    "Electricity prices rose by 9 percent in 2025 while gas prices fell by 4 percent. "
    "The barrier cost 336 million pounds, 40 percent more than the 240 million pounds budgeted. "
    "Engineers discovered unmapped mine workings beneath the southern bank in 2021. "
    "Construction began in 2019. "
    "Managers must respond within 10 working days. "
    "An employee whose request is refused may appeal within 15 working days. "
    "The company does not pay for home internet, electricity or heating costs. "
    "The trial did not include children. "
    "Test scores did not differ significantly between the groups. "
    "Esther proposed twice-weekly handovers so that nobody is on call over two consecutive weekends. "
    "Chiara will update the calendar and the paging tool. "
    "The policy takes effect on 1 March 2026 and will be reviewed by 31 March 2027. "
    "The company kept its dividend unchanged at 0.85 euros per share and said it would not start the buyback. "
    "Heat Pump Installations Double in First Year of National Grant Scheme\n"
    "Twelve percent of patients said they had not received at least one message. "
    "The purifier is for rooms of up to 40 square metres. "
    "The timer can switch the purifier off after 2, 4 or 8 hours."
)


async def verdict(reply: str, source: str = TRIAL):
    j = await OfflineCritic(hash_embedder()).factuality(source, reply)
    assert not j.unavailable, j.unavailable
    return [c.supported for c in j.claims], "; ".join(c.explanation for c in j.claims)


@pytest.mark.parametrize("reply,why", [
    ("Treatment completion was 71 percent in the reminder group and 87 percent in the usual care group.",
     "number-swap"),
    ("The coated cathode retained 64 percent of its capacity, while the uncoated control retained only 91 percent.",
     "number-swap"),
    ("Managers must respond within 15 working days.", "number moved from another sentence"),
    ("Engineers discovered unmapped mine workings beneath the southern bank in 2019.", "year moved"),
    ("Students at schools that started later slept 43 minutes longer on school nights.", "digit changed"),
    ("The barrier cost 336 billion pounds.", "scaled"),
    ("Twelve patients said they had not received at least one message.", "percent as an absolute amount"),
    ("Students at schools that started later slept 34 minutes shorter on school nights.", "antonym"),
    ("Electricity prices fell by 9 percent in 2025.", "direction"),
    ("The company pays for home internet, electricity and heating costs.", "negation removed"),
    ("The trial included children.", "negation removed"),
    ("Test scores differed significantly between the groups.", "no-change turned into change"),
    ("Chiara proposed twice-weekly handovers so that nobody is on call over two consecutive weekends.",
     "name replaced by another name of the document"),
    ("The policy takes effect on 1 May 2026.", "date: month"),
    ("The policy takes effect on 1 March 2027.", "date: year"),
    ("The company cut its dividend to 0.85 euros per share.", "kept unchanged -> cut"),
    ("Heat Pump Installations Halve in First Year of National Grant Scheme", "headline direction"),
    ("The document doesn't say how much working time managers have to respond.", "refusal the source answers"),
])
async def test_wrong_answers_fail(reply, why):
    verdicts, explanation = await verdict(reply)
    assert False in verdicts, f"{why}: {verdicts} {explanation}"


@pytest.mark.parametrize("reply", [
    "Treatment completion was 87 percent in the reminder group and 71 percent in the usual care group.",
    "The coated cathode retained 91 percent of its capacity, while the uncoated control retained only 64 percent.",
    "Managers must respond within 10 working days.",
    "Students at schools that started later slept 34 minutes longer on school nights.",
    "The company does not pay for home internet, electricity or heating costs.",
    "Test scores did not differ significantly between the groups.",
    "Esther proposed twice-weekly handovers so that nobody is on call over two consecutive weekends.",
    "The policy takes effect on 1 March 2026.",
    "Heat Pump Installations Double in First Year of National Grant Scheme",
    "The document doesn't say anything about pets.",
    "The purifier is for rooms of up to 40 square metres.",
])
async def test_faithful_answers_pass(reply):
    verdicts, explanation = await verdict(reply)
    assert verdicts and all(v is True for v in verdicts), f"{verdicts} {explanation}"


def test_bot_talk_is_not_a_claim_but_headlines_are():
    got = C.claims("Heat Pump Installations Double In 2025\nInstallations doubled last year.\n"
                   "Your LinkedIn post was sent to WhatsApp.\nI couldn't find an answer to that question in it.")
    assert got == ["Heat Pump Installations Double In 2025", "Installations doubled last year."]


@pytest.mark.parametrize("text,units", [
    ("rose from 66 to 89 percent", ["percent", "percent"]),
    ("cost 336 million pounds", ["absolute"]),
    ("Twelve percent of patients", ["percent"]),
])
def test_number_units(text, units):
    assert [u.unit for u in P.number_uses(P.tokenize(text))] == units
