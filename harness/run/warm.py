"""What a run loads before its first case, so that nothing loads in the middle of it: tiktoken's
encodings (the gateway counts tokens; only when the agent can reach it: ``counts_tokens``) and
lingua's language models (a ``*.language`` check); and the services the selected layers declare,
built beside the first cases (``services``)."""

from __future__ import annotations

import asyncio
import logging
from typing import Sequence

from harness import layer as layer_registry
from harness.checks import REGISTRY
from harness.errors import MissingExtra
from harness.services import Services
from harness.types import Case

log = logging.getLogger("harness.run.runner")


def encodings() -> None:
    try:
        from harness.models.tokens import warm

        warm()
    except Exception as exc:  # counting falls back to 'missing' tokens, reported per call
        log.warning("tiktoken encodings could not be loaded in advance: %s", exc)


#: The placeholders that give an agent the LLM gateway's address (harness.sandbox.ports).
GATEWAY_PLACEHOLDERS = ("{llm_base_url}", "{anthropic_base_url}")


def counts_tokens(config, cases: Sequence[Case] = ()) -> bool:
    """Can the agent call the LLM gateway (whose metering counts tokens with tiktoken)? Only
    when it is given the gateway's address: the sandbox's ports are new every run, so a target
    whose ``[target]`` command and env (and the cases' texts) name neither ``{llm_base_url}``
    nor ``{anthropic_base_url}`` never reaches it, and the encodings (0.3-1 s before the first
    case, about 110 MB) need not load. A target the harness does not start (no ``command``) may
    have been given it some other way, an ``inprocess`` one shares the harness's process: loaded."""
    t = config.target
    if t.inprocess or not t.command:
        return True
    texts = [*t.command, *t.env.values(), *(turn.send or "" for c in cases for turn in c.turns)]
    return any(p in text for text in texts for p in GATEWAY_PLACEHOLDERS)


def judges_language(cases: Sequence[Case], baseline) -> bool:
    """Does the run detect a reply's language (a ``*.language`` check, or a baseline's language invariants)?"""
    return baseline is not None or any(s.name.endswith(".language") for c in cases for t in c.turns for s in t.checks)


def language(config=None) -> None:
    """lingua's detector built and its models loaded (its first detection loads them, seconds
    that hold the interpreter's lock, even from a worker thread): before the first case, never
    in the middle of the run, where every case in flight would measure the stall. With the
    run's ``config``, lingua's answers of earlier runs are kept in its cache folder
    (checks/langmemo.py): when the last run found every text there, nothing is loaded ahead."""
    try:
        from harness.checks import langmemo
        from harness.checks.form import _detector, detect_language

        if config is not None:
            langmemo.use(_cache_dir(config))
            if not langmemo.needs_detector():
                return
        _detector()
        detect_language("Good morning, how are you today?")
    except Exception as exc:  # the language check reports it as unavailable
        log.warning("the language detector could not be loaded in advance: %s", exc)


def _cache_dir(config):
    from harness.models.settings import cache_dir

    try:
        return cache_dir(config)
    except Exception:  # a stand-in config without the section: no memo
        return None


def finish(record: bool = True) -> None:
    """The run's end: lingua's answers kept for the next run (checks/langmemo.py); ``record``:
    ``Services.embed_record`` (False: work unlike a nightly, whose new texts say nothing of it)."""
    try:
        from harness.checks import langmemo

        langmemo.save(record)
    except Exception as exc:  # never fails a run
        log.warning("the language memo could not be written: %s", exc)


def encodes(case: Case) -> bool:
    """Does a check of ``case`` always need the embedding model (similarity, critic)? A variant's
    ``equivalent`` comparison mostly does not (checks/equivalence.py)."""
    return any(s.name == "similarity" or s.name.startswith("critic.") for t in case.turns for s in t.checks)


def _model_needed_last_run(made: Services) -> bool:
    try:
        from harness.models.factories import model_needed_last_run

        return model_needed_last_run(made.config)
    except Exception:  # no record, a config without the section: load ahead, as before
        return True


def services(made: Services, cases: Sequence[Case]):
    """Start building the services the selected layers declare, in a worker thread (the future,
    or None when there is nothing to build)."""
    judged = dict.fromkeys(c.layer for c in cases
                           if any(REGISTRY[s.name].uses_services for t in c.turns for s in t.checks))
    declared = (s for name in judged for s in getattr(layer_registry.get(name), "services", ()))
    wanted = [s for s in dict.fromkeys(declared) if s in made.factories and not made.made(s)]
    if not wanted:
        return None

    # a similarity or critic check always encodes: its model starts loading now, in the
    # background (its own process, models/embed_worker.py: the loop every case is timed on is
    # never held), while the target starts and the first cases run; a variant's comparison
    # often needs no model at all (checks/equivalence.py), so for variants alone it stays lazy
    needing = [c for c in cases if encodes(c)]
    loads = bool(needing)
    if loads and "embedder" in wanted and not _model_needed_last_run(made):
        # every text of the last run was in the model's disk cache (a bot that answers as it did):
        # the model loads only when a text is new (its first batch says so on the console)
        loads = False
        (made.say or log.info)(f"the embedding model is loaded only if a text of the {len(needing)} case(s) with "
                               "similarity or critic checks is not in its disk cache (the last run's all were)")

    def build() -> None:
        for name in wanted:
            try:
                service = made.get(name)
                front = getattr(service, "front", None)
                if loads and front is not None and hasattr(front, "load_now"):  # the embedder's model
                    front.load_now()
            except MissingExtra:  # harness[models]: the command line said so once, each check says it again
                pass
            except Exception as exc:  # the check that needs it reports it as unavailable
                log.warning("service %s could not be built in advance: %s", name, exc)

    if loads and "embedder" in wanted:
        (made.say or log.info)(f"loading the embedding model in the background for {len(needing)} "
                                        "case(s) with similarity or critic checks; the cases start meanwhile")
    return asyncio.get_running_loop().run_in_executor(None, build)
