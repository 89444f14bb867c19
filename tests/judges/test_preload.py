"""``harness judges`` starts the embedding model's process before it reads the cases
(judges.run.preload): the run then uses those services, and a failure there is left for the
run to report where the model is needed."""

from __future__ import annotations

import threading
from pathlib import Path

from harness.judges import run as judges_run
from harness.judges.run import JudgeOptions, preload


class Front:
    def __init__(self, fail: bool = False):
        self.loaded = threading.Event()
        self.fail = fail

    def load_now(self):
        if self.fail:
            raise RuntimeError("no model here")
        self.loaded.set()


class Embedder:
    def __init__(self, front):
        self.front = front


class FakeServices:
    def __init__(self, front):
        self.front = front

    def get(self, name):
        assert name == "embedder"
        return Embedder(self.front)


def test_preload_makes_the_services_once_and_loads_the_model_in_a_thread(monkeypatch, tmp_path):
    front = Front()
    made = []

    def make(config, options):
        made.append(1)
        options.notes.append("critic note")
        return FakeServices(front)

    monkeypatch.setattr(judges_run, "make_services", make)
    options = JudgeOptions(out=Path(tmp_path))
    preload(object(), options)
    assert front.loaded.wait(10)  # loaded by the preload thread, not by the caller
    assert isinstance(options.services, FakeServices) and made == [1] and options.notes == ["critic note"]


def test_a_preload_that_fails_leaves_nothing_behind(monkeypatch, tmp_path):
    def make(config, options):
        options.notes.append("critic note")
        raise RuntimeError("bad config")

    monkeypatch.setattr(judges_run, "make_services", make)
    options = JudgeOptions(out=Path(tmp_path))
    preload(object(), options)
    assert options.services is None and options.notes == []  # the run makes them again, notes once


def test_a_model_that_fails_to_load_in_preload_raises_nothing_there(monkeypatch, tmp_path):
    front = Front(fail=True)
    monkeypatch.setattr(judges_run, "make_services", lambda config, options: FakeServices(front))
    options = JudgeOptions(out=Path(tmp_path))
    preload(object(), options)  # the thread swallows it; the run's own load_now raises it again
    for t in threading.enumerate():
        if t.name == "judges-model-preload":
            t.join(10)
    assert options.services is not None
