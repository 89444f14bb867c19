"""Layers: what a group of cases means, declared by the layer and looked up by name.

The engine names no layer. A layer is one object (``Layer``) that says:

- its ``name`` (what case files write as ``layer:``) and its ``fixtures`` folder;
- the checks it applies to every case of the layer by default (``default_checks``),
  added to a turn only when the case did not write a check of the same name there;
- the services its cases need (``services``: e.g. the embedder), warmed up only when a
  case of the layer runs;
- its summary metrics (``metrics``: results -> a dict merged into results.json
  ``layers.<name>``) and its section of the report as data (``report_section``), drawn by a
  template (``report_template``; a plugin's ``report_html`` string still works, deprecated);
- optionally, extra cases it derives from the suite (``derive_cases``; the robustness
  layer's metamorphic variants).

The built-in four live in ``layers/`` at the top of the repository, installed as
``harness.layers``. More layers come from any installed package through the entry-point
group ``harness.layers`` (``name = "package.module:LAYER"``), loaded the first time
something asks, like inspect_ai's registry; a plugin that fails to load is logged and
skipped, never a crash of the run.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil
from dataclasses import dataclass, field, replace
from importlib.metadata import entry_points
from typing import Any, Callable, Mapping, Sequence

from harness.types import Case, CaseResult, CheckSpec

log = logging.getLogger("harness.layer")

#: The entry-point group third-party layers register under.
GROUP = "harness.layers"
#: The package holding the built-in layers (the repository's ``layers/`` folder).
BUILTIN_PACKAGE = "harness.layers"


def _no_checks(case: Case, turn: int, context: Mapping[str, Any]) -> Sequence[CheckSpec]:
    return ()


def _no_metrics(results: Sequence[CaseResult], context: Mapping[str, Any]) -> dict[str, Any]:
    return {}


def _no_section(metrics: Mapping[str, Any]) -> str:
    return ""


def _no_cases(cases: Sequence[Case], context: Mapping[str, Any]) -> list[Case]:
    return []


def _no_notes(context: Mapping[str, Any]) -> list[str]:
    return []


def _no_lines(metrics: Mapping[str, Any]) -> list[str]:
    return []


@dataclass(frozen=True)
class Layer:
    """One layer of the suite: its cases' meaning, defaults, services, metrics and report."""

    name: str
    """What case files write as ``layer:`` and ``--layer`` selects: ``[a-z][a-z0-9_-]*``."""
    title: str
    """A human title for reports, e.g. "Input robustness"."""
    description: str = ""
    """One sentence: what regressions this layer catches."""
    fixtures: str = ""
    """The folder under ``fixtures/`` holding its case files (default: the name)."""
    order: int = 100
    """Where it sorts among layers in reports and in the run (built-ins: 10, 20, 30, 40)."""
    services: tuple[str, ...] = ()
    """Run-wide services its cases' checks use (``harness.services`` names: embedder, goldens,
    critic); warmed up while the target starts, and only when a case of the layer runs."""
    default_checks: Callable[[Case, int, Mapping[str, Any]], Sequence[CheckSpec]] = _no_checks
    """``(case, turn index, context) -> checks`` added to that turn of every case of the layer.
    ``context`` holds run facts such as ``state_probe`` (the target has a state probe)."""
    metrics: Callable[[Sequence[CaseResult], Mapping[str, Any]], dict[str, Any]] = _no_metrics
    """``(this layer's results, context) -> summary metrics`` for results.json ``layers.<name>``.
    ``context`` holds ``perf`` (the run's per-layer latency/tokens/cost), ``models``, ``out_dir``
    (where the run's folder is) and ``reports_dir`` (the project's reports folder)."""
    report_html: Callable[[Mapping[str, Any]], str] = _no_section
    """Deprecated: ``(results.json layers.<name>) -> an HTML fragment`` (escaped by the layer),
    inserted as it is and only when ``report_section`` is not given; warns ``DeprecationWarning``."""
    derive_cases: Callable[[Sequence[Case], Mapping[str, Any]], list[Case]] = _no_cases
    """``(the whole loaded suite, context) -> extra cases of this layer`` (e.g. metamorphic variants)."""
    settings: Any = None
    """The pydantic model of the layer's own harness.toml section, ``[<name>]`` (None: it has
    none); harness.config validates it with the engine's sections and reads its environment
    overrides (``HARNESS_<NAME>_<KEY>``). The layer reads it from ``Config.sections[name]``."""
    default_names: tuple[str, ...] = ()
    """Every check name ``default_checks`` may add: a case switches each off on a turn with
    ``<name>: false`` (docs/CASES.md); ``harness check`` refuses ``false`` on any other check."""
    summary_lines: Callable[[Mapping[str, Any]], list[str]] = _no_lines
    install_notes: Callable[[Mapping[str, Any]], list[str]] = _no_notes
    """What this install leaves out of the layer (``context["sections"]``: the config's sections),
    said by ``harness check`` and before a run: e.g. the default metamorphic variants without
    the ``models`` extra."""
    """``(results.json layers.<name>) -> plain lines`` printed under the layer's counts (terminal,
    summary.md): the layer's own headline figures, e.g. the variants' line."""

    # Added after the older fields, so a Layer built with positional arguments keeps its meaning.
    report_section: Callable[[Mapping[str, Any]], Mapping[str, Any] | None] | None = None
    """``(results.json layers.<name>) -> the data of its report.html section`` (None or empty: no
    section), drawn by ``report_template``. The default template takes ``{"tables": [{"title",
    "head", "rows", "note", "anchor"}], "empty": "line shown when no table"}`` (``layers._common.
    table`` builds a table); every value is escaped by the template."""
    report_template: str = "layers/tables.html.j2"
    """The template (under harness/report/templates/) that draws ``report_section``'s data."""

    @property
    def folder(self) -> str:
        return self.fixtures or self.name


@dataclass
class _Registry:
    layers: dict[str, Layer] = field(default_factory=dict)
    loaded: bool = False
    problems: list[str] = field(default_factory=list)


_REGISTRY = _Registry()


def _add(layer: Any, origin: str) -> None:
    if not isinstance(layer, Layer):
        _REGISTRY.problems.append(f"{origin}: not a harness.layer.Layer ({type(layer).__name__})")
        log.warning("layer plugin %s is not a harness.layer.Layer; skipped", origin)
        return
    known = _REGISTRY.layers.get(layer.name)
    if known is not None and known is not layer:
        _REGISTRY.problems.append(f"{origin}: layer {layer.name!r} is already registered; skipped")
        log.warning("layer %r from %s is already registered; skipped", layer.name, origin)
        return
    _REGISTRY.layers[layer.name] = layer


def _load() -> None:
    if _REGISTRY.loaded:
        return
    _REGISTRY.loaded = True
    for ep in sorted(entry_points(group=GROUP), key=lambda e: e.name):
        try:
            _add(ep.load(), f"entry point {ep.name} = {ep.value}")
        except Exception as exc:  # a broken plugin is reported, never a crash of the run
            _REGISTRY.problems.append(f"entry point {ep.name} = {ep.value}: {type(exc).__name__}: {exc}")
            log.warning("layer plugin %s failed to load: %s", ep.value, exc)
    # The built-ins also when the installed metadata predates them (an old editable install).
    try:
        package = importlib.import_module(BUILTIN_PACKAGE)
    except ImportError as exc:  # pragma: no cover - a broken install
        _REGISTRY.problems.append(f"{BUILTIN_PACKAGE}: {exc}")
        return
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{BUILTIN_PACKAGE}.{info.name}")
        if isinstance(getattr(module, "LAYER", None), Layer) and module.LAYER.name not in _REGISTRY.layers:
            _add(module.LAYER, f"{BUILTIN_PACKAGE}.{info.name}")


def all_layers() -> list[Layer]:
    """Every registered layer, in report order."""
    _load()
    return sorted(_REGISTRY.layers.values(), key=lambda layer: (layer.order, layer.name))


def names() -> list[str]:
    """The layer names, in report order."""
    return [layer.name for layer in all_layers()]


def get(name: str) -> Layer | None:
    """The layer called ``name``, or None."""
    _load()
    return _REGISTRY.layers.get(name)


def problems() -> list[str]:
    """Plugins that could not be loaded (shown by ``harness check``)."""
    _load()
    return list(_REGISTRY.problems)


def reload() -> None:
    """Forget what was loaded (a test that installs a plugin layer calls this)."""
    _REGISTRY.layers.clear()
    _REGISTRY.problems.clear()
    _REGISTRY.loaded = False


def config_sections() -> dict[str, Any]:
    """``{layer name: its section's model}`` for the layers that have a harness.toml section."""
    return {layer.name: layer.settings for layer in all_layers() if layer.settings is not None}


def install_notes(sections: Mapping[str, Any]) -> list[str]:
    """Every layer's ``install_notes`` for a config's sections, in report order."""
    out: list[str] = []
    for layer in all_layers():
        out.extend(layer.install_notes({"sections": sections}))
    return out


def default_names() -> set[str]:
    """The check names any layer adds by default (each may be switched off with ``false``)."""
    return {n for layer in all_layers() for n in layer.default_names}


def summary_lines(name: str, metrics: Mapping[str, Any]) -> list[str]:
    """The layer's own summary lines for its results.json block ([] for an unknown layer or a bug)."""
    layer = get(name)
    if layer is None or not isinstance(metrics, Mapping):
        return []
    try:
        return [str(line) for line in layer.summary_lines(metrics)]
    except Exception as exc:  # a layer's bug must not lose the report
        log.warning("layer %s summary lines failed: %s", name, exc)
        return []


def with_default_checks(case: Case, context: Mapping[str, Any]) -> Case:
    """``case`` with its layer's default checks added to every turn that lacks them and did not
    switch them off (``Turn.disabled``)."""
    layer = get(case.layer)
    if layer is None:
        return case
    turns = []
    changed = False
    for index, turn in enumerate(case.turns):
        have = {spec.name for spec in turn.checks} | set(turn.disabled)
        extra = [spec for spec in layer.default_checks(case, index, context) if spec.name not in have]
        if extra:
            changed = True
            turn = replace(turn, checks=(*turn.checks, *extra))
        turns.append(turn)
    return replace(case, turns=tuple(turns)) if changed else case
