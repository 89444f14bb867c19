"""The offline critic reads meaning: for every rule, wrong answers that must fail and the
faithful answer that must pass (hash embedder: the rules, not the embedding, decide)."""

from __future__ import annotations

import pytest

from harness.models import claims as C
from harness.models.critic_offline import OfflineCritic
from harness.models.embedder import hash_embedder
from harness.models.rules.dates import check_dates, source_dates
from harness.models.rules.numbers import rounds_to
from harness.models.rules.pair import SourceIndex
from harness.models.rules.text import number_uses, tokenize

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
    assert [u.unit for u in number_uses(tokenize(text))] == units


# Faithful answers the critic once rejected, each beside a wrong one derived from it that must
# still fail: fractions ("nine of twelve"), counts written as words ("twice-daily" = two a day),
# rounding with "about", totals of two counts, numbers bound by the other numbers of the claim,
# clock times, codes (Q3), direction words about different things, "untested" = "not tested",
# negation inside a relative clause, a claim joining two source sentences, terse answers.
PAIRS_SOURCE = (
    "Nine of the twelve intervention schools had to renegotiate school bus contracts. "
    "Lindgren said the company would close two of its eleven European factories by the end of 2026. "
    "Twice-daily text message reminders raised treatment completion from 71 percent to 87 percent. "
    "Streets with more than 40 percent tree canopy cover were 4.2 degrees cooler than streets with little canopy. "
    "We selected twelve restored marshes and six natural marshes as references. "
    "In coin cells the coated cathode kept 91 percent of its capacity after 2,000 charge and discharge cycles. "
    "The pouch cells retained 86 percent of their capacity after 1,000 cycles. "
    "Electricity prices rose by 9 percent in 2025 while gas prices fell by 4 percent, which narrowed the savings. "
    "Reminders in Swahili or English were sent at 8:00 and 20:00 on each treatment day. "
    "A computer-generated list assigned 930 patients to reminders and 930 to usual care. "
    "The coating process has not yet been tested on batches larger than 5 kilograms. "
    "On day four a field worker who did not know the group visited the patient at home. "
    "Third-quarter revenue rose 14 percent to 2.31 billion euros. "
    "Eligible employees may work from home for up to three days per week."
)


@pytest.mark.parametrize("faithful,wrong", [
    ("Nine of twelve schools had to renegotiate bus contracts.",
     "Ten of twelve schools had to renegotiate bus contracts."),
    ("The company would close two European factories by the end of 2026.",
     "The company would close eleven European factories by the end of 2026."),
    ("Two text message reminders a day raised treatment completion from 71 to 87 percent.",
     "Three text message reminders a day raised treatment completion from 71 to 87 percent."),
    ("Streets with more than 40 percent tree canopy cover were about 4 degrees cooler.",
     "Streets with more than 40 percent tree canopy cover were about 6 degrees cooler."),
    ("We selected 18 marshes.", "We selected 19 marshes."),
    ("The coated cathode kept 91 percent of its capacity after 2,000 cycles.",
     "The coated cathode kept 86 percent of its capacity after 2,000 cycles."),
    ("The savings narrowed as electricity prices rose by 9 percent in 2025.",
     "The savings narrowed as electricity prices fell by 9 percent in 2025."),
    ("The list assigned patients to reminders at 8:00 and 20:00.",
     "The list assigned patients to reminders at 9:00 and 20:00."),
    ("The coating process is untested on batches larger than 5 kilograms.",
     "The coating process has been tested on batches larger than 5 kilograms."),
    ("A field worker who did not know the group visited the patient at home on day four.",
     "A field worker who did not know the group did not visit the patient at home on day four."),
    ("Q3 revenue rose 14 percent to 2.31 billion euros.", "Q3 revenue rose 41 percent to 2.31 billion euros."),
    ("Up to three days per week.", "Up to four days per week."),
])
async def test_faithful_pass_and_its_mutation_fails(faithful, wrong):
    ok, why_ok = await verdict(faithful, PAIRS_SOURCE)
    assert ok and all(v is True for v in ok), f"faithful rejected: {why_ok}"
    bad, why_bad = await verdict(wrong, PAIRS_SOURCE)
    assert False in bad, f"wrong accepted: {why_bad}"


def test_date_day_does_not_eat_the_year():
    src = SourceIndex(C.sentences("The policy takes effect on 1 March 2026."), set())
    assert ("1", "march", "2026") in source_dates(src)
    assert check_dates("It takes effect on 1 March 2027.", src)


def test_rounding_and_totals():
    assert rounds_to("4", "4.2") and rounds_to("15000", "14500") and rounds_to("300", "310")
    assert not rounds_to("5", "4.2") and not rounds_to("4.3", "4.2") and not rounds_to("320", "310")


@pytest.mark.parametrize("right,wrong", [
    ("The document does not say; it gives no price.", "The document says it costs 300 euros."),
    ("The document doesn’t say which brands.", "The document does say which brands."),
])
async def test_rubric_hint_alternatives(right, wrong):
    from harness.models.critic import RubricHints
    critic = OfflineCritic(hash_embedder())
    hints = RubricHints(about=("doesn't say|does not say",), not_about=("The document says",))
    assert (await critic.rubric("", right, "q", hints)).score == 1.0
    assert (await critic.rubric("", wrong, "q", hints)).score < 1.0


@pytest.mark.parametrize("expected,right,wrong", [
    ("The barrier is designed to protect about 11,000 homes and 900 businesses in the lower Ashford valley.",
     "The document says: About 11,000 homes.", "The document says: About 12,000 homes."),
    ("Replace the HEPA and carbon filter every 6 months, or sooner if the filter light turns red.",
     "The document says: Every 6 months.", "The document says: Every 8 months."),
    ("Eligible employees may work from home for up to three days per week, if their manager agrees.",
     "Up to three days per week.", "Up to two days per week."),
])
async def test_terse_answer_judged_against_its_best_clause(expected, right, wrong):
    critic = OfflineCritic(hash_embedder())
    good, bad = await critic.answer(right, expected), await critic.answer(wrong, expected)
    assert good.score >= 0.6 and "against its clause" in good.explanation, good.explanation
    assert bad.score < 0.6 and "clause" not in bad.explanation, bad.explanation


NAMES_SOURCE = (
    "Lumen Foods Lifts Revenue and Cuts Margin Forecast\n"
    "Lumen Foods said revenue rose 14 percent in the third quarter. "
    "Lumen Foods expects its margin to fall. "
    "The company kept its dividend unchanged at 0.85 euros per share. "
    "Chief executive Marta Lindgren said cocoa had cost the company 180 million euros more. "
    "Analysts at Harlow Securities called the forecast cautious. "
    "Sales in North America grew 6 percent."
)


@pytest.mark.parametrize("faithful,wrong", [
    # a minor name of the document given a fact its own sentences do not hold
    ("Lumen Foods kept its dividend unchanged at 0.85 euros per share.",
     "Marta Lindgren kept its dividend unchanged at 0.85 euros per share."),
    ("Marta Lindgren said cocoa cost the company 180 million euros more.",
     "Harlow Securities said cocoa cost the company 180 million euros more."),
    ("Sales in North America grew 6 percent.", "Sales at Harlow Securities grew 6 percent."),
])
async def test_name_replaced_by_another_name_of_the_document(faithful, wrong):
    ok, why_ok = await verdict(faithful, NAMES_SOURCE)
    assert ok and all(v is True for v in ok), f"faithful rejected: {why_ok}"
    bad, why_bad = await verdict(wrong, NAMES_SOURCE)
    assert False in bad and "entity" in why_bad, f"wrong accepted: {why_bad}"


async def test_minor_name_rule_leaves_sentence_starts_and_acronyms_alone():
    src = NAMES_SOURCE + (" Staff must use the VPN at home. According to Lindgren, Harlow Securities was wrong. "
                          "A laser sensor measures PM2.5 every second.")
    ok, why = await verdict("According to the company, it kept its dividend unchanged at 0.85 euros per share. "
                            "Use the VPN. A laser sensor measures PM2.5 every second and shows it on a ring.", src)
    assert all(v is True for v in ok), why


# Rules of the third round (issue 11): golden answers the critic once rejected beside a wrong
# answer derived from each; number-bound directions; direction words bound to what they are said
# of; negation read word by word; names with numbers; plain synonyms and word forms.
ROUND3_SOURCE = (
    "Students at schools that started later slept 34 minutes longer on school nights, and their daytime "
    "sleepiness scores were 18 percent lower. "
    "Attendance rose by 2.1 percentage points, while test scores in mathematics and reading did not change. "
    "Treatment completion was 87 percent in the reminder group and 71 percent in the usual care group. "
    "Workers from exposed colonies made 23 percent fewer trips that returned with pollen. "
    "In coin cells the coated cathode kept 91 percent of its capacity after 2,000 cycles. "
    "We placed 40 colonies next to oilseed rape fields grown from seed coated with clothianidin, and 40 next to "
    "untreated fields. "
    "The barrier is designed to protect about 11,000 homes and 900 businesses. "
    "On day four a field worker, who did not know which group the patient was in, visited the patient at home. "
    "Kingsgate recorded 27 percent more trips after its new lanes opened. "
    "Steel prices rose sharply in 2022, adding about 38 million pounds to the cost. "
    "Poor performance in the cold remains the main obstacle to commercial use. "
    "Exposed colonies produced 44 percent fewer new queens."
)


@pytest.mark.parametrize("faithful,wrong", [
    # "and were" starts a clause: "less tired" is not read against "longer"
    ("When schools started later, students slept 34 minutes longer and were less tired in the day.",
     "When schools started later, students slept 34 minutes shorter and were less tired in the day."),
    # a reordered comparison is no swap ("compared with" bounds each number's words)
    ("With reminders, 87 percent of patients completed their treatment, compared with 71 percent in the usual "
     "care group.",
     "With reminders, 78 percent of patients completed their treatment, compared with 71 percent in the usual "
     "care group."),
    # a number's direction as the source states it
    ("Exposed colonies made 23 percent fewer pollen trips.", "Exposed colonies made 23 percent more pollen trips."),
    ("The coated cathode kept 91 percent of its capacity after 2,000 cycles.",
     "The coated cathode lost 91 percent of its capacity after 2,000 cycles."),
    # a direction word bound to what the source says went the other way
    ("Attendance went up and test scores did not suffer.", "Attendance went down and test scores did not suffer."),
    # negation word by word
    ("The barrier will protect about 11,000 homes.", "The barrier will not protect about 11,000 homes."),
    ("A field worker who did not know the patient's group visited the home on day four.",
     "A field worker who did know the patient's group visited the home on day four."),
    # un- antonyms only when said of the same thing ("treated seeds" is not "untreated fields")
    ("Half the colonies were put next to fields where the seeds had been coated with clothianidin.",
     "Half the colonies were put next to fields where the seeds had been uncoated with clothianidin."),
    # a name with a number the source never writes
    ("Kingsgate recorded 27 percent more trips.", "Kingsgate 8 recorded 27 percent more trips."),
    # a capitalised first word the source never uses is no name of the source ("Simple ...")
    ("Simple reminders raised treatment completion to 87 percent in the reminder group.",
     "Simple reminders raised treatment completion to 78 percent in the reminder group."),
    # a direction word read against any sentence sharing three words with its clause; names are no anchor
    ("Exposed colonies made 23 percent fewer pollen trips and produced fewer new queens.",
     "Exposed colonies made 23 percent fewer pollen trips and produced more new queens."),
    # "later" is a direction word, never a label trading places with "school"
    ("Starting school later gave students 34 minutes more sleep.",
     "Starting school earlier gave students 34 minutes more sleep."),
])
async def test_round3_faithful_pass_and_its_mutation_fails(faithful, wrong):
    ok, why_ok = await verdict(faithful, ROUND3_SOURCE)
    assert ok and all(v is True for v in ok), f"faithful rejected: {why_ok}"
    bad, why_bad = await verdict(wrong, ROUND3_SOURCE)
    assert False in bad, f"wrong accepted: {why_bad}"


def test_novel_words_in_any_form_or_plain_synonym():
    from harness.models.critic_offline import _novel
    index = SourceIndex(C.sentences(ROUND3_SOURCE), C.names(ROUND3_SOURCE))
    assert _novel("Rising steel prices", index) == []                        # rose / rising
    assert _novel("Cold performance is the open risk", index) == []         # remains / open, obstacle / risk
    assert _novel("Cold performance is the open risk of tariffs", index) == ["tarif"]


async def test_a_name_is_held_to_the_sentence_of_its_own_clause():
    src = NAMES_SOURCE + " Lindgren said the company would close two of its eleven European factories."
    ok, why = await verdict("Lumen Foods said revenue rose 14 percent in the third quarter, and it will close two "
                            "European factories.", src)
    assert ok and all(v is True for v in ok), why
    bad, why = await verdict("Lumen Foods said revenue rose 14 percent in the third quarter, and it will close two "
                             "Harlow factories.", src)
    assert False in bad, why


async def test_a_code_is_one_word_the_source_must_write():
    src = "The trial was funded by the Halvorsen Foundation under grant HF-2021-0457 and by the Nordic Youth Health Fund."
    ok, why = await verdict("The Halvorsen Foundation funded the trial under grant HF-2021-0457.", src)
    assert ok and all(v is True for v in ok), why
    bad, why = await verdict("The Halvorsen Foundation funded the trial under grant HF-2021-457.", src)
    assert False in bad, why


async def test_a_label_of_the_source_is_held_to_its_own_facts():
    src = ("Cycling in Greater Harwick grew 18 percent in 2025.\nCounter stations:\nKingsgate 8: 2,140 trips a day.\n"
           "Kingsgate 2: 1,310 trips a day.")
    ok, why = await verdict("Kingsgate 8 counted 2,140 trips a day.", src)
    assert ok and all(v is True for v in ok), why
    bad, why = await verdict("Cycling in Kingsgate 8 grew 18 percent in 2025.", src)
    assert False in bad, why


@pytest.mark.parametrize("faithful,wrong", [
    ("Cycling grew 18 percent in 2025, with 11 percent fewer serious injuries.",
     "Cycling grew 18 percent in 11, with 2025 percent fewer serious injuries."),
])
async def test_years_and_amounts_do_not_trade_places(faithful, wrong):
    src = "Cycling grew 18 percent in 2025. Serious injuries fell by 11 percent."
    ok, why = await verdict(faithful, src)
    assert ok and all(v is True for v in ok), why
    bad, why = await verdict(wrong, src)
    assert False in bad and "year" in why, why
