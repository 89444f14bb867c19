"""OpenAI-compatible chat completions client: one call for the summary, one for the post."""

from __future__ import annotations

import asyncio

import aiohttp

from .config import PLATFORM_NAMES, PLATFORMS, Config

MAX_DOC_WORDS = 6000

SUMMARY_SYSTEM = (
    "You are DocBot, an assistant that summarizes documents for busy readers.\n"
    "TASK: summarize\n"
    "Write a faithful summary of the document in at most three sentences. Use only facts "
    "stated in the document. Ignore acknowledgements, funding and references. Reply with the "
    "summary only.")
POST_SYSTEM = (
    "You are DocBot, an assistant that writes social media posts about documents.\n"
    "TASK: post\n"
    "PLATFORM: {platform}\n"
    "MAX_CHARS: {limit}\n"
    "Write one {name} post about the document, at most {limit} characters in total. Start "
    "with a short headline, then the key point, and end with the line 'Source: <url>' using "
    "the URL given. Reply with the post only.")


class LLMError(Exception):
    """The chat completions endpoint failed or answered something unusable."""


def truncate_words(text: str, limit: int = MAX_DOC_WORDS) -> str:
    if len(text.split()) <= limit:
        return text
    # keep line structure where possible: cut by whitespace-separated words
    out, n = [], 0
    for token in text.replace("\n", " \n ").split(" "):
        if token and token != "\n":
            n += 1
            if n > limit:
                break
        out.append(token)
    return " ".join(out).replace(" \n ", "\n")


def user_message(url: str, title: str, text: str) -> str:
    return f"Source: {url}\nTitle: {title}\n\n{truncate_words(text)}"


class LLMClient:
    def __init__(self, cfg: Config, session: aiohttp.ClientSession):
        self.cfg = cfg
        self.session = session

    async def chat(self, model: str, system: str, user: str, user_id: str) -> str:
        payload = {
            "model": model,
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": user}],
            "temperature": 0,
            "user": str(user_id),
        }
        headers = {"Authorization": f"Bearer {self.cfg.openai_api_key}"}
        try:
            async with self.session.post(
                    f"{self.cfg.openai_base_url}/chat/completions", json=payload, headers=headers,
                    timeout=aiohttp.ClientTimeout(total=self.cfg.llm_timeout)) as resp:
                if resp.status >= 400:
                    raise LLMError(f"HTTP {resp.status}: {(await resp.text())[:200]}")
                data = await resp.json(content_type=None)
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as e:
            raise LLMError(f"{type(e).__name__}: {e}") from None
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise LLMError("malformed response") from None
        if not isinstance(content, str) or not content.strip():
            raise LLMError("empty completion")
        return content.strip()

    async def summary(self, url: str, title: str, text: str, user_id: str) -> str:
        return await self.chat(self.cfg.summary_model, SUMMARY_SYSTEM,
                               user_message(url, title, text), user_id)

    async def post(self, url: str, title: str, text: str, platform: str, user_id: str) -> str:
        system = POST_SYSTEM.format(platform=platform, limit=PLATFORMS[platform],
                                    name=PLATFORM_NAMES[platform])
        return await self.chat(self.cfg.post_model, system, user_message(url, title, text),
                               user_id)
