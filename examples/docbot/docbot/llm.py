"""OpenAI-compatible chat completions client: one call for the summary, one for the post."""

from __future__ import annotations

import asyncio

import aiohttp

from . import faults, instructions
from .config import PLATFORM_NAMES, Config
from .logic import platform_limit

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
# Questions about a document (contract: "Instructions and questions").
ANSWER_SYSTEM = (
    "You are DocBot, an assistant that answers questions about documents.\n"
    "TASK: answer\n"
    "QUESTION: {question}\n"
    "Answer the question in one or two sentences using only facts stated in the document.")
ANSWER_STRICT = " If the document does not answer the question, reply exactly: NOT IN DOCUMENT"


class LLMError(Exception):
    """The chat completions endpoint failed or answered something unusable."""

    def __init__(self, message: str, status: int | None = None, retry_after: float | None = None):
        super().__init__(message)
        self.status = status            # HTTP status, None for timeouts / broken answers
        self.retry_after = retry_after  # seconds from a Retry-After header, if any


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None


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
        self.history: dict[str, list[str]] = {}  # per end user; only the history_resent regression reads it

    async def chat(self, model: str, system: str, user: str, user_id: str) -> str:
        """One completion, retried on transient failures (docbot/retry.py)."""
        from .retry import call_with_retry

        return await call_with_retry(self.cfg, lambda: self._chat_once(model, system, user, user_id))

    async def _chat_once(self, model: str, system: str, user: str, user_id: str) -> str:
        earlier = []
        if self.cfg.on("history_resent"):  # REGRESSION history_resent: every earlier turn goes along again
            past = self.history.get(str(user_id), [])
            earlier = [{"role": "user" if i % 2 == 0 else "assistant", "content": c} for i, c in enumerate(past)]
        payload = {
            "model": model,
            "messages": [{"role": "system", "content": system}, *earlier,
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
                    raise LLMError(f"HTTP {resp.status}: {(await resp.text())[:200]}", resp.status,
                                   _retry_after(resp.headers.get("Retry-After")))
                data = await resp.json(content_type=None)
        except (aiohttp.ClientError, asyncio.TimeoutError, ValueError) as e:
            raise LLMError(f"{type(e).__name__}: {e}") from None
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise LLMError("malformed response") from None
        if not isinstance(content, str) or not content.strip():
            raise LLMError("empty completion")
        if self.cfg.on("non_ascii_stripped"):  # REGRESSION non_ascii_stripped: an ASCII-only "sanitiser"
            content = faults.ascii_only(content)
        if self.cfg.on("numbers_rounded"):  # REGRESSION numbers_rounded: decimals made whole
            content = faults.round_decimals(content)
        if self.cfg.on("hedges_removed"):  # REGRESSION hedges_removed: "may reduce" -> "reduces"
            content = faults.remove_hedges(content)
        if self.cfg.on("digit_swap"):  # REGRESSION digit_swap: two digits of the first number swapped
            content = faults.swap_digits(content)
        if self.cfg.on("percent_points"):  # REGRESSION percent_points: percent said as percentage points
            content = faults.percentage_points(content)
        if self.cfg.on("year_shift"):  # REGRESSION year_shift: the first year one later
            content = faults.shift_year(content)
        if self.cfg.on("history_resent"):
            self.history.setdefault(str(user_id), []).extend((user, content))
        return content.strip()

    def _prompt(self, url: str, title: str, text: str) -> str:
        if self.cfg.on("summarize_acknowledgements"):  # REGRESSION summarize_acknowledgements
            text = faults.back_matter(text)
        if self.cfg.on("no_truncation"):  # REGRESSION no_truncation
            return f"Source: {url}\nTitle: {title}\n\n{text}"
        user = user_message(url, title, text)
        if self.cfg.on("prompt_sent_twice"):  # REGRESSION prompt_sent_twice
            user = f"{user}\n\n{truncate_words(text)}"
        return user

    def _instruction(self, instr: "instructions.Instruction | None") -> str:
        """AUDIENCE/FORMAT/FOCUS lines appended to a system prompt."""
        keep = not self.cfg.on("drop_audience")  # REGRESSION drop_audience: audience/format lost
        return instructions.markers(instr, audience=keep)

    async def summary(self, url: str, title: str, text: str, user_id: str,
                      instruction: "instructions.Instruction | None" = None) -> str:
        system = SUMMARY_SYSTEM + self._instruction(instruction)
        if self.cfg.on("slow_path"):  # REGRESSION slow_path
            await asyncio.sleep(2.0)
        if self.cfg.on("summary_loop"):  # REGRESSION summary_loop: 3 wasted "refinement" calls
            for _ in range(3):
                await self.chat(self.cfg.summary_model, system, self._prompt(url, title, text), user_id)
        return await self.chat(self.cfg.summary_model, system,
                               self._prompt(url, title, text), user_id)

    async def post(self, url: str, title: str, text: str, platform: str, user_id: str,
                   instruction: "instructions.Instruction | None" = None) -> str:
        system = POST_SYSTEM.format(platform=platform, limit=platform_limit(self.cfg, platform),
                                    name=PLATFORM_NAMES[platform]) + self._instruction(instruction)
        return await self.chat(self.cfg.post_model, system, self._prompt(url, title, text),
                               user_id)

    async def answer(self, url: str, title: str, text: str, question: str, user_id: str) -> str:
        """The answer to a question about the document; NOT IN DOCUMENT when it has none."""
        strict = "" if self.cfg.on("answer_unanswerable") else ANSWER_STRICT  # REGRESSION answer_unanswerable
        system = ANSWER_SYSTEM.format(question=question.replace("\n", " ")) + strict
        return await self.chat(self.cfg.summary_model, system, self._prompt(url, title, text), user_id)
