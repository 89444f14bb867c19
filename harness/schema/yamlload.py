"""A YAML loader that refuses what users never mean (case files; docs/CASES.md "Validation").

PyYAML's SafeLoader, with limits that turn hostile or accidental input into one clear
problem instead of a traceback, a hang or gigabytes of memory:

- the file is read by ``files.read_text``: a regular file (a folder named ``x.yaml``, a symlink
  loop, a FIFO are refused) of at most ``files.MAX_BYTES`` bytes of UTF-8 (a bad byte is named by
  its offset and line);
- nesting deeper than ``MAX_DEPTH`` is refused while composing (no ``RecursionError``);
- aliases may not expand the document past ``MAX_NODES`` nodes (the billion-laughs bomb), and
  an alias may not refer to its own anchor;
- a key written twice in one mapping names both lines (PyYAML silently keeps the last);
- a text holding a lone surrogate (``"\\ud800"``: no UTF-8 can carry it, so every report
  writer would crash on it), a date that is none (``2024-13-45``: PyYAML's ValueError escaped
  as a traceback) and the harness's own ``__line__`` key are refused with their line.

Every mapping keeps the line it starts on under ``LINE`` (``"__line__"``, as the case loader
always had) and is a ``LineDict`` whose ``key_lines`` give the line of each key, so a schema
error can be reported at the exact line (``line_of``).

When PyYAML has libyaml, a document is read first by libyaml's event parser under this same
Python composer and constructor (``_FastLimits``: the same events, so the same data and lines,
4-5x faster: the speed bench's 131-case file 65 -> 13 ms on a busy machine, the nightly's
fixtures 244 -> 57 ms). Anything it refuses, or any text the pure reader would refuse
(``Reader.NON_PRINTABLE``), is read again by the pure parser, so every refusal and its
message is the pure parser's, as before.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.events import AliasEvent
from yaml.reader import ReaderError

from harness.schema.files import InputProblem as YamlProblem, read_text

LINE = "__line__"
#: Deepest nesting of lists and mappings.
MAX_DEPTH = 64
#: Most nodes a document may hold once its aliases are expanded.
MAX_NODES = 200_000
#: A UTF-16 surrogate on its own: YAML's \\ud800 escape makes one, and no UTF-8 writer takes it.
_SURROGATE = re.compile("[\ud800-\udfff]")


class LineDict(dict):
    """A mapping from YAML: ``line`` where it starts, ``key_lines`` where each key is."""

    line: int | None = None
    key_lines: dict

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.key_lines = {}
        self.item_lines: dict = {}
        """For a key whose value is a list: the line of each item (``cases[1]`` that is no table)."""


class _Limits(yaml.SafeLoader):
    """SafeLoader with a depth limit, an alias budget, duplicate-key refusal and line marks."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent, index):  # noqa: ANN001 - PyYAML's signature
        if self.check_event(AliasEvent):
            return super().compose_node(parent, index)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep", line=mark.line + 1,
                                  fix="a case file needs a few levels; flatten the structure")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_scalar_node(self, anchor):  # noqa: ANN001 - PyYAML's signature
        return _checked_scalar(yaml.composer.Composer.compose_scalar_node(self, anchor))

    def construct_yaml_timestamp(self, node):  # noqa: ANN001 - PyYAML's signature
        try:
            return yaml.constructor.SafeConstructor.construct_yaml_timestamp(self, node)
        except (ValueError, OverflowError) as exc:  # 2024-13-45: PyYAML lets datetime's error through
            raise YamlProblem(f"{node.value!r} reads as a date but is none ({exc})", line=node.start_mark.line + 1,
                              fix="write a real date (YYYY-MM-DD), or quote it to mean text") from None

    def compose_document(self):
        node = super().compose_document()
        _check_expansion(node)
        return node


def _checked_scalar(node: yaml.ScalarNode) -> yaml.ScalarNode:
    """A scalar with no lone surrogate (a pair written as two escapes is joined into one character)."""
    if _SURROGATE.search(node.value):  # a pair written as two escapes (JSON's way) is one character
        node.value = node.value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    bad = _SURROGATE.search(node.value)
    if bad:
        raise YamlProblem(f"text holds a lone surrogate (U+{ord(bad.group()):04X}, written as an escape such as "
                          "\\ud800): it is no character and cannot be written as UTF-8",
                          line=node.start_mark.line + 1,
                          fix="write the character itself, or both halves of its pair (\\U0001F600 for 😀)")
    return node


def _check_expansion(root: yaml.Node) -> None:
    """Refuse a document whose aliases expand it past MAX_NODES nodes (or into a cycle)."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node) -> int:  # depth is bounded by MAX_DEPTH, so recursion is safe
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise YamlProblem("an alias refers to the anchor it sits in (a cycle)", line=node.start_mark.line + 1,
                              fix="remove the *alias, or point it at another anchor")
        active.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            children: Iterable[yaml.Node] = node.value
        elif isinstance(node, yaml.MappingNode):
            children = (n for pair in node.value for n in pair)
        else:
            children = ()
        deepest = 0
        for child in children:
            total += size(child)
            deepest = max(deepest, depths[id(child)])
            if total > MAX_NODES:
                raise YamlProblem(f"aliases expand this document past {MAX_NODES:,} values (an alias bomb?)",
                                  line=node.start_mark.line + 1,
                                  fix="write the values out, or use fewer nested *aliases")
        if deepest + 1 > MAX_DEPTH:  # a chain of aliases, each nesting the last, is as deep once expanded
            raise YamlProblem(f"aliases nest this document more than {MAX_DEPTH} levels deep once expanded",
                              line=node.start_mark.line + 1, fix="write the values out, or use fewer nested *aliases")
        active.discard(key)
        sizes[key] = total
        depths[key] = deepest + 1
        return total

    if root is not None:
        size(root)


def _construct_mapping(loader: _Limits, node: yaml.MappingNode) -> LineDict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = loader.construct_object(key_node)
        line = key_node.start_mark.line + 1
        if key == LINE:
            raise YamlProblem(f"the key {LINE!r} is the harness's own (it marks lines) and cannot be used",
                              line=line, fix=f"remove {LINE} or rename it")
        try:
            if key in seen:
                raise YamlProblem(f"key {key!r} is written twice (lines {seen[key]} and {line}); "
                                  "YAML would silently keep only the last", line=line,
                                  fix="remove one of them, or merge their contents")
            seen[key] = line
        except TypeError:  # an unhashable key; PyYAML reports it below
            pass
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError:
            raise YamlProblem(f"a key must be a plain value, found {key_node.tag.rsplit(':', 1)[-1]}",
                              line=key_node.start_mark.line + 1, fix="write the key as text") from None
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines.setdefault(key, key_node.start_mark.line + 1)
        if isinstance(value_node, yaml.SequenceNode):
            out.item_lines.setdefault(key, [n.start_mark.line + 1 for n in value_node.value])
    out[LINE] = out.line
    return out


_Limits.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Limits.add_constructor("tag:yaml.org,2002:timestamp", _Limits.construct_yaml_timestamp)


def _fast_class() -> type | None:
    """``_Limits`` with libyaml's event parser (``yaml._yaml.CParser``) in place of the pure reader,
    scanner and parser: the composer (with the depth limit and the alias budget) and the
    constructor (duplicate keys, line marks) are ``_Limits``'s own. None without libyaml."""
    try:
        from yaml._yaml import CParser as cparser
    except ImportError:  # PyYAML built without libyaml
        return None
    composing = {name: getattr(_Limits, name) for name in (
        "compose_node", "compose_document", "compose_scalar_node", "compose_sequence_node",
        "compose_mapping_node", "check_node", "get_node", "get_single_node")}

    def __init__(self, stream: str) -> None:
        cparser.__init__(self, stream)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        yaml.composer.Composer.__init__(self)
        self._depth = 0

    def compose_node(self, parent, index):  # noqa: ANN001 - _Limits's depth limit, over Composer's
        if self.check_event(AliasEvent):
            return yaml.composer.Composer.compose_node(self, parent, index)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep")  # the pure parser says it again
            return yaml.composer.Composer.compose_node(self, parent, index)
        finally:
            self._depth -= 1

    def compose_document(self):
        node = yaml.composer.Composer.compose_document(self)
        _check_expansion(node)
        return node

    composing.update(__init__=__init__, compose_node=compose_node, compose_document=compose_document,
                     yaml_constructors=dict(_Limits.yaml_constructors),
                     yaml_multi_constructors=dict(_Limits.yaml_multi_constructors))
    return type("_FastLimits", (cparser, yaml.constructor.SafeConstructor, yaml.resolver.Resolver), composing)


_FastLimits = _fast_class()


def _fast_loads(text: str) -> tuple[bool, Any]:
    """(True, the data) when libyaml's parser read ``text`` without a problem; (False, None)
    when the pure parser must read it (no libyaml, a character the pure reader refuses, any
    error: the pure parser's message is the one reported)."""
    if _FastLimits is None or yaml.reader.Reader.NON_PRINTABLE.search(text):
        return False, None
    loader = None
    try:
        loader = _FastLimits(text)
        return True, loader.get_single_data()
    except Exception:  # noqa: BLE001 - whatever it is, the pure parser decides and words it
        return False, None
    finally:
        if loader is not None:
            loader.dispose()


def loads(text: str) -> Any:
    """Parse one YAML document with the limits above; YamlProblem on any refusal or syntax error."""
    done, data = _fast_loads(text)
    if done:
        return data
    loader = None
    try:
        loader = _Limits(text)  # the reader refuses control characters here already
        return loader.get_single_data()
    except YamlProblem:
        raise
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark else None
        if isinstance(exc, ReaderError):  # a character YAML does not allow: its position, not a mark
            line = text.count("\n", 0, exc.position) + 1
            code = exc.character if isinstance(exc.character, int) else ord(exc.character)
            problem = f"character U+{code:04X} is not allowed in YAML (a control character)"
        if isinstance(exc, (ComposerError, ConstructorError)) and getattr(exc, "context", None):
            problem = f"{exc.context}: {problem}"
        raise YamlProblem(f"YAML syntax error: {problem}", line=line,
                          fix="correct the YAML at that line (quote strings with : or #)") from None
    except RecursionError:  # pragma: no cover - MAX_DEPTH stops it first
        raise YamlProblem(f"nested more than {MAX_DEPTH} levels deep", fix="flatten the structure") from None
    finally:
        if loader is not None:
            loader.dispose()


def load_file(path: str | os.PathLike) -> Any:
    """``loads(read_text(path))`` (YamlProblem for any refusal)."""
    return loads(read_text(Path(path)))


def strip_lines(value: Any) -> Any:
    """The plain data: every ``LINE`` mark removed, LineDicts turned into dicts."""
    if isinstance(value, dict):
        return {k: strip_lines(v) for k, v in value.items() if k != LINE}
    if isinstance(value, list):
        return [strip_lines(v) for v in value]
    return value


def line_of(data: Any, loc: Iterable[Any]) -> int | None:
    """The line of the value at ``loc`` (keys and list indexes) in loaded data: the key's own
    line where known, else the line of the nearest enclosing mapping."""
    best: int | None = getattr(data, "line", None) if isinstance(data, dict) else None
    node = data
    items: list = []
    for part in loc:
        if isinstance(node, dict):
            if part in getattr(node, "key_lines", {}):
                best = node.key_lines[part]
            if part not in node:
                break
            items = getattr(node, "item_lines", {}).get(part) or []
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            if part < len(items):
                best = items[part]  # the item's own line (a scalar item has no mapping to say it)
            items = []
            node = node[part]
        else:
            break
        if isinstance(node, dict) and getattr(node, "line", None) is not None and not isinstance(part, str):
            best = node.line
    return best
