"""Running an incoming message: dedup (step 1), decide, reply, and the slow job.

Each update is processed in its own background task; tasks of one chat are serialized by a
per-chat lock (asyncio locks are FIFO, so order is kept). A 'stop'/'cancel' arriving while a
job runs cancels that job at once; the queued stop message then answers CANCELLED.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict

import aiohttp

from . import messages as M
from .config import PLATFORM_NAMES, Config
from .fetch import Document, FetchError, UnsupportedContent, fetch_document
from .llm import LLMClient, LLMError
from . import faults
from .logic import (Decision, Incoming, Job, decide, finalize_post, is_cancel, platform_limit,
                    word_count)
from .sessions import Store
from .followups import ask_platform, doc_fields, is_stale, run_followup  # multi-turn layer

log = logging.getLogger("docbot")


class Pipeline:
    def __init__(self, cfg: Config, store: Store, fetch_http: aiohttp.ClientSession,
                 llm: LLMClient, channels: dict, publisher):
        self.cfg = cfg
        self.store = store
        self.fetch_http = fetch_http
        self.llm = llm
        self.channels = channels      # "telegram" / "whatsapp" -> client with send/typing
        self.publisher = publisher    # WhatsApp client; posts go to cfg.publish_to
        self.locks: defaultdict[str, asyncio.Lock] = defaultdict(asyncio.Lock)
        self.jobs: dict[str, asyncio.Task] = {}
        self.tasks: set[asyncio.Task] = set()
        self.current_chat: dict[str, str] = {}     # channel -> the chat that wrote last
        self.answers: dict[tuple[str, str], str] = {}   # (chat, document) -> answer
        self.replied = 0                                 # replies sent so far (slow_leak reads it)
        self.posted: set[tuple[str, str]] = set()       # (chat, platform) already posted

    # -- scheduling -------------------------------------------------------------------------

    def spawn(self, coro) -> asyncio.Task:
        task = asyncio.create_task(coro)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)
        return task

    def submit(self, msg: Incoming) -> bool:
        """Called by the webhooks; returns at once. False if the update was a duplicate."""
        first = self.store.first_time(msg.channel, msg.update_key, msg.chat_id)
        words = word_count(msg.text) if msg.text else 0
        log.info("update %s id=%s chat=%s kind=%s words=%d%s", msg.channel, msg.update_key,
                 msg.chat_id, msg.kind, words, "" if first else " duplicate")
        # 1. duplicate update: ignored, no reply
        if not first and not self.cfg.on("no_update_dedup"):  # REGRESSION no_update_dedup
            return False
        key = f"{msg.channel}:{msg.chat_id}"
        self.current_chat[msg.channel] = msg.chat_id
        stale = is_stale(self, msg)  # out-of-order delivery (followups.py)
        if is_cancel(msg.text) and key in self.jobs and self.cfg.on("cancel_ignored"):
            # REGRESSION cancel_ignored: 'stop' is acknowledged, the running job goes on
            self.spawn(self.reply(msg, M.CANCELLED))
            return True
        if is_cancel(msg.text) and key in self.jobs:
            self.jobs[key].cancel()
        self.spawn(self._process(msg, key, stale))
        return True

    async def drain(self) -> None:
        """Wait until every background task has finished (tests, shutdown)."""
        while self.tasks:
            await asyncio.gather(*list(self.tasks), return_exceptions=True)

    async def close(self) -> None:
        for t in list(self.tasks):
            t.cancel()
        await asyncio.gather(*list(self.tasks), return_exceptions=True)

    # -- processing -------------------------------------------------------------------------

    async def _process(self, msg: Incoming, key: str, stale: bool = False) -> None:
        async with self.locks[key]:
            try:
                session = self.store.get(msg.chat_id)
                if self.cfg.on("state_lost_between_turns"):
                    # REGRESSION state_lost_between_turns: the stored document is dropped
                    self.store.update(msg.chat_id, doc_url=None, doc_title=None, doc_text=None,
                                      pending=None, candidates=None)
                session = self.store.update(msg.chat_id, channel=msg.channel,
                                            turns=session.turns + 1)
                decision: Decision = decide(msg, session, self.cfg)
                log.info("decision %s chat=%s rule=%s%s", msg.channel, msg.chat_id, decision.rule,
                         " +job" if decision.job else "")
                if stale:  # an older message arriving late never replaces the newer platform
                    decision.changes.pop("platform", None)
                if decision.changes:
                    self.store.update(msg.chat_id, **decision.changes)
                for text in decision.replies:
                    await self.reply(msg, text)
                if decision.job:
                    decision.job.stale = stale
                    self.jobs[key] = asyncio.current_task()
                    try:
                        await self._run_job(msg, decision.job)
                    except asyncio.CancelledError:
                        log.info("job cancelled chat=%s", msg.chat_id)
                    finally:
                        self.jobs.pop(key, None)
                if self.cfg.on("slow_followup_turns"):
                    # REGRESSION slow_followup_turns: "history compaction" after the reply, still
                    # holding the chat's lock: the chat's next message waits for it
                    await asyncio.sleep(4.0)
            except Exception:
                log.exception("error while processing %s update %s (chat %s)", msg.channel,
                              msg.update_key, msg.chat_id)

    async def reply(self, msg: Incoming, text: str) -> None:
        channel = self.channels[msg.channel]
        buttons = getattr(text, "buttons", ())  # followups.Rich: a text with buttons
        chat = msg.chat_id
        if self.cfg.on("replies_cross_chats"):
            # REGRESSION replies_cross_chats: the reply goes to the chat that wrote last
            chat = self.current_chat.get(msg.channel, msg.chat_id)
        if self.cfg.on("name_swap"):  # REGRESSION name_swap: two names of the reply trade places
            text = type(text)(faults.swap_names(text), buttons) if buttons else faults.swap_names(text)
        if self.cfg.on("dates_shifted"):  # REGRESSION dates_shifted: dates a day early
            text = type(text)(faults.shift_dates(text), buttons) if buttons else faults.shift_dates(text)
        self.replied += 1
        if self.cfg.on("slow_leak"):  # REGRESSION slow_leak: a cache that is never emptied, scanned per reply
            await asyncio.sleep(min(2.0, self.replied * 0.006))
        if self.cfg.on("replies_split") and not buttons and len(text) > 700:  # REGRESSION replies_split
            for part in faults.split_long(text):
                await channel.send(chat, part)
            return
        await (channel.send(chat, text, buttons=buttons) if buttons else channel.send(chat, text))
        if self.cfg.on("duplicate_replies"):
            await channel.send(chat, text)  # REGRESSION duplicate_replies

    async def _run_job(self, msg: Incoming, job: Job) -> None:
        chat = msg.chat_id
        if job.kind != "summarize":  # multi-turn follow-ups (followups.py)
            await run_followup(self, msg, job)
            return
        self.store.update(chat, task="summarize")
        await self.channels[msg.channel].typing(chat)
        if job.text is None:
            try:
                doc = await fetch_document(self.fetch_http, job.url, self.cfg.fetch_allow,
                                           self.cfg.fetch_timeout,
                                           accept_any=self.cfg.on("unsupported_types_accepted"))
            except FetchError as e:
                self.store.update(chat, task=None)
                log.info("fetch failed chat=%s url=%s reason=%s", chat, job.url, e)
                await self.reply(msg, M.FETCH_FAILED.format(url=job.url, reason=str(e)))
                return
            except UnsupportedContent as e:
                self.store.update(chat, task=None)
                await self.reply(msg, M.UNSUPPORTED_TYPE.format(kind=e.content_type))
                return
        else:
            doc = Document(url=job.url, title=job.title or job.url, text=job.text)
        if not doc.text.strip():
            self.store.update(chat, task=None, pending=None)
            await self.reply(msg, M.EMPTY_DOCUMENT.format(url=job.url))
            return
        if job.instruction is not None and job.instruction.question:  # answered, never posted
            await self._answer(msg, job, doc)
            return
        if job.platform is None:
            self.store.update(chat, task=None, pending="platform",
                              **doc_fields(self.cfg, self.store.get(chat), doc, job))
            await self.reply(msg, ask_platform(msg.channel))
            return
        before = self.store.get(chat)  # the session as the job found it
        self.store.update(chat, pending=None, **doc_fields(self.cfg, before, doc, job))
        text = doc.text
        if self.cfg.on("summary_from_previous_document") and before.doc_text:
            text = before.doc_text  # REGRESSION summary_from_previous_document: the session's old text
        try:
            summary = await self.llm.summary(doc.url, doc.title, text, chat, job.instruction)
            post = await self.llm.post(doc.url, doc.title, text, job.platform, chat,
                                       job.instruction)
        except LLMError as e:
            log.warning("LLM call failed chat=%s: %s", chat, e)
            self.store.update(chat, task=None)
            await self.reply(msg, M.LLM_FAILED)
            return
        if self.cfg.on("invent_number"):  # REGRESSION invent_number: a figure is inflated
            summary, post = faults.inflate_number(summary, doc.text), faults.inflate_number(post, doc.text)
        source = doc.url
        if self.cfg.on("post_source_stale_link") and before.doc_url:
            source = before.doc_url  # REGRESSION post_source_stale_link: the session's old link
        post = finalize_post(post, source, job.platform, platform_limit(self.cfg, job.platform))
        # REGRESSION post_to_user: the post is addressed to the user who asked
        to = chat if self.cfg.on("post_to_user") else self.cfg.publish_to
        if not (self.cfg.on("post_dedup_by_platform") and (chat, job.platform) in self.posted):
            await self.publisher.send(to, post)  # REGRESSION post_dedup_by_platform skips repeats
        self.posted.add((chat, job.platform))
        self.store.update(chat, task=None, pending=None, last_summary=summary)
        await self.reply(msg, M.DONE.format(title=doc.title, summary=summary,
                                            Platform=PLATFORM_NAMES[job.platform]))

    async def _answer(self, msg: Incoming, job: Job, doc: Document) -> None:
        """A question about the document: one LLM call, ANSWER or NO_ANSWER, no post."""
        chat = msg.chat_id
        self.store.update(chat, pending=None, doc_url=doc.url, doc_title=doc.title,
                          doc_text=doc.text)
        cached = self.answers.get((chat, doc.url))
        try:
            if self.cfg.on("stale_followup_answer") and cached is not None:
                answer = cached  # REGRESSION stale_followup_answer: the cache key lacks the question
            else:
                answer = await self.llm.answer(doc.url, doc.title, doc.text, job.instruction.question, chat)
            self.answers[(chat, doc.url)] = answer
        except LLMError as e:
            log.warning("LLM call failed chat=%s: %s", chat, e)
            self.store.update(chat, task=None)
            await self.reply(msg, M.LLM_FAILED)
            return
        self.store.update(chat, task=None)
        if answer.strip().rstrip(".").upper() == "NOT IN DOCUMENT":
            await self.reply(msg, M.NO_ANSWER)
        else:
            await self.reply(msg, M.ANSWER.format(answer=answer.strip()))
