"""Case files: loading, validation and selection (contract in docs/CASES.md).

Everything is validated before anything runs, and every problem found is reported at
once with its file, line, case id and a fix: a bad suite exits 2 and runs nothing.
"""

from __future__ import annotations

import difflib
import fnmatch
import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

from pydantic import ValidationError

from harness.cases.case import ID_FIX, ID_RULE, _case
from harness.cases.keys import (CASE_KEYS, FILE_KEYS, MAX_USERS, TURN_KEYS, _Collector, _strip, did_you_mean,
                                unknown_check_fix)
from harness.checks import GROUPED, KEY_PARAMS, REGISTRY
from harness.checks.params import example, known_keys
from harness.errors import ConfigError, FixtureError, FixtureErrors
from harness import layer as layer_registry
from harness.schema.files import InputProblem
from harness.schema.models import case_file_model
from harness.schema.problems import Problem, path_text, problems
from harness.schema.yamlload import LINE, line_of, strip_lines
from harness.schema.yamlload import load_file as load_yaml
from harness.types import Case


def file_model():
    """The pydantic model of a case file for the checks and layers installed now (harness.schema)."""
    grouped = {g: [n.split(".", 1)[1] for n in REGISTRY if n.startswith(g + ".")] for g in GROUPED}
    return case_file_model({name: d.params for name, d in REGISTRY.items()}, grouped, layer_registry.names(),
                           baseline=KEY_PARAMS["baseline"])


#: The loader's own words for lists of the wrong length.
_LIST_MESSAGES = {
    "users": f"users must be a list of 2 to {MAX_USERS} distinct names like alice, got {{value}}",
    "burst": "burst must be a list of at least two texts, got {value}",
    "turns": "turns must be a non-empty list",
    "cases": "cases must be a non-empty list",
}


def _schema_message(problem: Problem, data: dict) -> tuple[str, str]:
    """The message and fix of a schema problem, in the loader's own words where it has them."""
    loc = problem.loc
    if loc == ("layer",):
        return (f"layer {data.get('layer')!r} is not one of {', '.join(layer_registry.names())}",
                "write one of the layers above (or install the package of yours)")
    if len(loc) == 3 and loc[0] == "cases" and loc[2] == "id":
        cid = data["cases"][loc[1]].get("id") if isinstance(data["cases"][loc[1]], dict) else None
        return (f"case id {cid!r} {ID_RULE}", ID_FIX)
    if problem.message.startswith("must have") and loc and loc[-1] in _LIST_MESSAGES:
        return _LIST_MESSAGES[loc[-1]].format(value=problem.message.rsplit(", got ", 1)[-1]), problem.fix
    if "expect" in loc[:-1]:
        return _check_message(problem)
    if problem.message.startswith("unknown key") and loc:
        guess = did_you_mean(str(loc[-1]), sorted(CASE_KEYS | TURN_KEYS))
        if guess:
            return problem.message, f"did you mean {guess!r}? ({problem.fix})" if problem.fix else f"did you mean {guess!r}?"
    return problem.message, problem.fix


def _check_message(problem: Problem) -> tuple[str, str]:
    """A problem under ``expect``: an unknown check, or a check's parameters that its type
    (``CheckDef.params``) refuses; the fix ends with the check's example."""
    loc = problem.loc
    at = loc.index("expect")
    key = str(loc[at + 1])
    grouped = key in GROUPED and len(loc) > at + 2
    name = f"{key}.{loc[at + 2]}" if grouped else key
    rest = loc[at + (3 if grouped else 2):]
    definition = REGISTRY.get(name)
    if problem.message.startswith("unknown key") and not rest:
        return f"unknown check {name!r}", unknown_check_fix(name)
    if definition is None:
        return problem.message, problem.fix
    shown = example(definition.params)
    sample = f"e.g. {key}: {{{name.split('.', 1)[1]}: {shown}}}" if grouped else f"e.g. {name}: {shown}"
    if problem.message.startswith("unknown key"):
        keys = known_keys(definition.params) if len(rest) == 1 else []
        guess = did_you_mean(str(rest[-1]), keys) if keys else None
        takes = f"{name} takes {', '.join(keys)}" if keys else f"see {name} in docs/CASES.md"
        return problem.message, (f"did you mean {guess!r}? ({takes})" if guess else takes)
    if not shown or "e.g." in problem.fix:
        return problem.message, problem.fix or sample
    return problem.message, f"{problem.fix}; {sample}" if problem.fix else sample


def _validate_schema(data: dict, file: str, out: _Collector) -> set[int] | None:
    """Validate the file against the case-file schema; every problem goes to ``out``. The indexes
    of the cases with a problem, or None if the file as a whole is unusable."""
    plain = strip_lines(data)
    try:
        file_model().model_validate(plain)
    except ValidationError as exc:
        found = problems(exc, plain, docs="docs/CASES.md")
    else:
        return set()
    bad: set[int] = set()
    whole = False
    for problem in found:
        loc = problem.loc
        message, fix = _schema_message(problem, plain)
        line = line_of(data, loc)
        if len(loc) >= 2 and loc[0] == "cases" and isinstance(loc[1], int):
            raw = plain["cases"][loc[1]]
            cid = raw.get("id") if isinstance(raw, dict) else None
            bad.add(loc[1])
            where = path_text(loc[2:-1] if message.startswith("unknown key") else loc[2:])
            out.add(f"{where}: {message}" if where and not message.startswith("case id") else message, file=file,
                    case=cid if isinstance(cid, str) else f"#{loc[1] + 1}", line=line, fix=fix)
        else:
            whole = True
            where = path_text(loc[:-1] if message.startswith("unknown key") else loc)
            out.add(f"{where}: {message}" if where and not message.startswith(("layer ", where)) else message,
                    file=file, line=line, fix=fix)
    return None if whole else bad


_ENTRY = re.compile(r"^(\s*)-(?:\s|$)")
_BLOCK_ID = re.compile(r"^\s*(?:-\s+)?id:\s*[\"']?([a-z0-9-]+)[\"']?\s*(?:#.*)?$")
_QUOTED_ID = re.compile(r"""^\s*(?:-\s+)?["']id["']:\s*["']?([a-z0-9-]+)["']?\s*(?:#.*)?$""")
_FLOW_ID = re.compile(r"[{,]\s*id:\s*[\"']?([a-z0-9-]+)[\"']?\s*[,}]")


def _case_at(path: Path, line: int | None) -> str:
    """The id of the case a line of a file that did not load sits in ('' when unknown), read from
    the raw text (the YAML could not be parsed): the entry of ``cases:`` holding the line, and the
    ``id:`` key of that entry, wherever in the entry it is written (after the faulty line too, or
    in a flow table ``- {id: x, ...}``), never a neighbouring case's."""
    if not line:
        return ""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    top = next((i for i, text in enumerate(lines[:line]) if re.match(r"""^(cases|"cases"|'cases')\s*:""", text)), None)
    if top is None:
        return ""
    indent = None
    entries: list[int] = []
    end = len(lines)
    for i in range(top + 1, len(lines)):
        text = lines[i]
        if text and not text[0].isspace() and not text.startswith(("-", "#")):
            end = i  # the next top-level key
            break
        m = _ENTRY.match(text)
        if m and (indent is None or len(m.group(1)) == indent):
            indent = len(m.group(1)) if indent is None else indent
            entries.append(i)
    here = [i for i in entries if i <= line - 1]
    if not here:
        return ""
    first = here[-1]
    after = [i for i in entries if i > first]
    last = after[0] if after else end
    for i in range(first, last):
        text = lines[i]
        block = _BLOCK_ID.match(text)
        key_indent = len(text) - len(text.lstrip(" -")) if i == first else len(text) - len(text.lstrip())
        if block and key_indent == (indent or 0) + 2:
            return block.group(1)
        quoted = _QUOTED_ID.match(text)
        if quoted and key_indent == (indent or 0) + 2:
            return quoted.group(1)
        if i == first:
            flow = _FLOW_ID.search(text.split("#", 1)[0])
            if flow and text.lstrip(" -").startswith("{"):
                return flow.group(1)
    return ""


def load_file(path: Path, out: _Collector, display: str | None = None, docs_dir: Path | None = None) -> list[Case]:
    """The cases of one file; every problem goes to ``out`` (nothing raised)."""
    file = display or str(path)
    try:
        data = load_yaml(path)
    except InputProblem as exc:
        out.add(exc.message, file=file, case=_case_at(path, exc.line), line=exc.line, fix=exc.fix)
        return []
    if not isinstance(data, dict):
        out.add("a case file must be a table with layer and cases", file=file,
                fix="start with layer: <name> and a cases: list (docs/CASES.md)")
        return []
    bad = _validate_schema(data, file, out)
    if bad is None:
        return []
    unknown = [k for k in data if k != LINE and k not in FILE_KEYS]
    if unknown:
        out.add(f"unknown top-level key(s) {unknown}", file=file, fix="top-level keys: layer, defaults, cases")
    layer = data.get("layer")
    if not isinstance(layer, str) or layer_registry.get(layer) is None:
        out.add(f"layer {layer!r} is not one of {', '.join(layer_registry.names())}", file=file,
                line=data.get(LINE), fix="write one of the layers above (or install the package of yours)")
        return []
    defaults = _strip(data.get("defaults") or {})
    if not isinstance(defaults, dict):
        out.add("defaults must be a table", file=file)
        return []
    raw_cases = data.get("cases")
    if not isinstance(raw_cases, list) or not raw_cases:
        out.add("cases must be a non-empty list", file=file)
        return []
    cases = [c for c in (_case(rc, layer=layer, defaults=defaults, file=file, out=out, docs_dir=docs_dir)
                         for i, rc in enumerate(raw_cases) if i not in bad) if c]
    out.single_turn = False  # the file's own errors after its cases keep their words
    return cases


#: The quarantine file of a fixtures folder (harness.night.quarantine.FILE; the loader sits below it).
QUARANTINE_FILE = "quarantine.yaml"
#: Folders of a fixtures folder that hold no case files by design.
NOT_CASE_FOLDERS = ("documents",)


def _is_yaml(path: Path) -> bool:
    """A case file by its name (``x.YAML`` too). What is not a regular file under such a name (a
    folder, a link loop, a dangling link) is still returned: the loader refuses it by name."""
    return path.suffix.lower() in (".yaml", ".yml") and not path.name.startswith(".")


def _walk_yaml(folder: Path) -> list[Path]:
    """YAML names under ``folder``, sub-folders included, symlinked ones too (a folder already
    walked, a link loop, is not entered twice; a linked sub-folder was skipped silently before)."""
    found = []
    seen: set[str] = set()
    for here, dirs, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(here)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found += [Path(here) / n for n in names + [d for d in dirs if _is_yaml(Path(d))] if _is_yaml(Path(n))]
    return sorted(set(found))


def _case_files(root: Path, folders: Mapping[str, str], out: "_Collector") -> list[Path]:
    """Every case file of the layer folders, sub-folders included, whatever the case of its
    ``.yaml``/``.yml`` suffix. YAML files where no layer looks (a misspelt layer folder such as
    ``robustnes/``, or at the top next to the layer folders) are reported, never silently skipped."""
    files: list[Path] = []
    for child in sorted(root.iterdir()):
        if child.is_dir() and child.name in folders:
            files += _walk_yaml(child)
        elif child.name in folders:  # a file (or a dangling link) where a layer's folder belongs
            out.add(f"{child.name} is not a folder, so the {folders[child.name]} layer's cases would not be loaded",
                    file=str(child), fix=f"make {child.name}/ a folder of *.yaml case files (or remove it)")
        elif child.is_dir() and child.name not in NOT_CASE_FOLDERS and not child.name.startswith("."):
            stray = _walk_yaml(child)
            if stray:
                close = difflib.get_close_matches(child.name, list(folders), n=1, cutoff=0.6)
                out.add(f"{child.name}/ holds {len(stray)} YAML file(s) but is no layer's folder, so they would "
                        "not be loaded", file=str(stray[0]),
                        fix=(f"rename it to {close[0]}/" if close else
                             f"case files go in one of {', '.join(f + '/' for f in folders)}"))
        elif _is_yaml(child) and child.name.lower() in ("quarantine.yaml", "quarantine.yml") \
                and child.name != QUARANTINE_FILE:  # QUARANTINE.yaml, quarantine.yml: read by nobody before
            out.add(f"{child.name} is not read: the quarantine file is named {QUARANTINE_FILE}", file=str(child),
                    fix=f"rename it to {QUARANTINE_FILE}")
        elif _is_yaml(child) and child.name != QUARANTINE_FILE:
            out.add("a YAML file at the top of the fixtures folder is not loaded as cases", file=str(child),
                    fix=f"move it into the folder of its layer ({', '.join(f + '/' for f in folders)})")
    return files


def load_cases(fixtures: str | Path, *, layers: Iterable[str] = (), globs: Iterable[str] = (),
               derive: bool = True, docs_dir: str | Path | None = None, config: Any = None) -> list[Case]:
    """Load and validate every case file under ``fixtures``; select by layer and id glob.

    With ``docs_dir`` (the run's documents folder), every ``source:`` must name a file in it
    (when that folder exists: a config without one, e.g. for another suite, is not judged here).

    The whole suite is validated (so a broken file is reported even when another layer
    was selected); raises FixtureErrors listing every problem. With ``derive``, each
    layer then adds the cases it derives from the suite (``Layer.derive_cases``: the
    robustness layer's metamorphic variants), selected like the written ones; ``config`` (the
    run's ``Config``) gives them its sections (``[robustness] variants``).
    """
    root = Path(fixtures)
    out = _Collector()
    layers = list(layers)
    known = layer_registry.names()
    for name in layers:
        if name not in known:
            raise FixtureError(f"unknown layer {name!r}", fix=f"layers: {', '.join(known)}")
    if not root.is_dir():
        raise FixtureError("fixtures folder not found", file=str(root), fix="pass --fixtures DIR")
    docs = Path(docs_dir) if docs_dir is not None and Path(docs_dir).is_dir() else None
    folders = {layer.folder: layer.name for layer in layer_registry.all_layers()}
    files = _case_files(root, folders, out)
    cases: list[Case] = []
    for path in files:
        home_folder = path.relative_to(root).parts[0]
        loaded = load_file(path, out, docs_dir=docs)
        for case in loaded:
            if case.layer != folders[home_folder]:
                home = layer_registry.get(case.layer)
                out.add(f"file says layer {case.layer!r} but lives in fixtures/{home_folder}/", file=str(path),
                        fix=f"move it to fixtures/{home.folder if home else case.layer}/ or correct layer:")
                break
        cases.extend(loaded)
    if derive and not out.errors:
        context = {"fixtures": root, "sections": dict(getattr(config, "sections", None) or {}),
                   "config_file": str(getattr(config, "path", None) or "")}
        for layer in layer_registry.all_layers():
            try:
                cases.extend(layer.derive_cases(tuple(cases), context))
            except FixtureErrors as exc:
                out.errors.extend(exc.errors)
            except FixtureError as exc:
                out.errors.append(exc)
            except ConfigError as exc:  # a layer's own section: name the variable that set it, if one did
                attribute = getattr(config, "from_environment", None)
                raise (attribute(exc) if attribute else exc) from None
    seen: dict[str, str] = {}
    for case in cases:
        if case.id in seen:
            out.add(f"duplicate case id (also in {seen[case.id]})", file=case.file, case=case.id,
                    fix="case ids are unique across the whole suite: rename one")
        seen.setdefault(case.id, case.file)
    if out.errors:
        raise FixtureErrors(out.errors)
    selected = [c for c in cases if not layers or c.layer in layers]
    globs = list(globs)
    if globs:
        selected = [c for c in selected if any(fnmatch.fnmatchcase(c.id, g) for g in globs)]
    return selected
