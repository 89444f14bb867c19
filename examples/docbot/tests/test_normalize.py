"""docbot reads a request as a person would: variants of one request parse the same, and
foreign requests, links and names are left alone."""

from __future__ import annotations

import pytest

from docbot import language, normalize

BASE = "summarize https://example.com/paper.pdf for linkedin"


@pytest.mark.parametrize("variant", [
    "smumarize https://example.com/paper.pdf for linkedin",           # two letters swapped
    "summarize https://example.com/paper.pdf for liknedin",
    "summrize https://example.com/paper.pdf for linkedin",            # one dropped
    "summarіze https://example.com/paper.pdf for linkedin",           # Cyrillic і
    "súmmarize https://example.com/paper.pdf for linkedín",           # stray accents
    "Hi there! summarize https://example.com/paper.pdf for linkedin",
    "🙏 summarize https://example.com/paper.pdf for linkedin",
    "  summarize  https://example.com/paper.pdf   for linkedin\n",
])
def test_variants_read_as_the_request(variant):
    assert normalize.request(variant).lower() == BASE


@pytest.mark.parametrize("text", [
    "résumez ce document pour twitter https://example.com/a.pdf",      # French stays French
    "fasse dieses Dokument zusammen https://example.com/a.pdf",
    "what did Ольга Петрова conduct?",                                  # a Russian name stays Russian
    "the linked document please",                                       # "linked" is no "linkedin"
])
def test_foreign_words_and_names_are_left_alone(text):
    assert normalize.request(text) == text


def test_links_are_never_touched():
    url = "https://Example.com/Рaper%20ONE.pdf?x=ÁB"
    assert url in normalize.request(f"smumarize {url} for twitter")


def test_a_french_request_is_still_refused_as_not_english():
    assert not language.is_english(normalize.request("résumez ce document pour twitter s'il vous plaît"))


def test_an_emoji_only_message_keeps_its_emoji():
    assert normalize.request("👍") == "👍"


@pytest.mark.parametrize("a,b,typo", [("garnt", "grant", True), ("recycl", "cycl", False),
                                      ("linked", "linkedin", False), ("grant", "grant", False)])
def test_one_typo(a, b, typo):
    assert normalize.one_typo(a, b) is typo


def test_nearest_reads_a_typo_as_the_document_word():
    assert normalize.nearest({"garnt", "recycl"}, {"grant", "cycl"}) == {"grant", "recycl"}
