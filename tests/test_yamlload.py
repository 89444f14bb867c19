"""The safe YAML loader (harness/schema/yamlload.py) and file reader (files.py): each refusal
says what and where; the limits hold without hanging."""

from __future__ import annotations

import os
import time

import pytest

from harness.schema.files import InputProblem, decode, read_text
from harness.schema.yamlload import LINE, MAX_DEPTH, YamlProblem, line_of, loads, strip_lines


def refusal(text: str) -> InputProblem:
    with pytest.raises(InputProblem) as info:
        loads(text)
    return info.value


def test_plain_yaml_loads_with_lines():
    data = loads("a: 1\nb:\n  - x: 2\n    y: [1, 2]\n")
    assert strip_lines(data) == {"a": 1, "b": [{"x": 2, "y": [1, 2]}]}
    assert data[LINE] == 1 and data["b"][0][LINE] == 3
    assert line_of(data, ("b", 0, "y")) == 4 and line_of(data, ("b",)) == 2 and line_of(data, ("nope",)) == 1


def test_duplicate_key_names_both_lines():
    p = refusal("a: 1\nb:\n  c: 2\n  d: 3\n  c: 4\n")
    assert p.line == 5 and "'c'" in p.message and "lines 3 and 5" in p.message


def test_merge_keys_may_override():
    assert strip_lines(loads("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n"))["c"] == {"x": 3, "y": 2}


def test_nesting_is_bounded_without_recursion_error():
    assert loads("a: " + "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2))
    p = refusal("a: " + "[" * 50_000 + "]" * 50_000)
    assert "nested more than" in p.message and p.line == 1


def test_alias_bomb_is_refused_fast():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 10)]  # 10^10 values
    started = time.process_time()  # CPU seconds, not wall time: the bound holds on a busy machine
    p = refusal("\n".join(lines) + "\n")
    assert "alias bomb" in p.message and time.process_time() - started < 2


def test_a_few_aliases_are_fine():
    data = strip_lines(loads("d: &d {channel: whatsapp}\ncases: [{<<: *d, id: a}, {<<: *d, id: b}]\n"))
    assert [c["channel"] for c in data["cases"]] == ["whatsapp", "whatsapp"]


def test_recursive_alias_is_refused():
    assert "cycle" in refusal("a: &a [1, *a]\n").message


def test_control_character_is_refused_with_its_line():
    p = refusal("a: 1\nb: x\x00y\n")
    assert p.line == 2 and "U+0000" in p.message


def test_bad_bytes_name_offset_and_line():
    with pytest.raises(InputProblem) as info:
        decode(b"a: 1\nb: caf\xe9\n")
    assert info.value.line == 2 and "offset 11" in info.value.message and "0xe9" in info.value.message
    assert decode("\ufeffa: 1".encode("utf-8")) == "a: 1"  # a BOM is fine


def test_paths_that_are_no_file(tmp_path):
    folder = tmp_path / "x.yaml"
    folder.mkdir()
    loop = tmp_path / "loop.yaml"
    os.symlink(loop, loop)
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    for path, words in ((folder, "folder"), (loop, "symlink loop"), (fifo, "not a regular file"),
                        (tmp_path / "missing.yaml", "does not exist")):
        with pytest.raises(InputProblem, match=words):
            read_text(path)


@pytest.mark.parametrize("levels", [70, 600, 1200])
def test_an_alias_chain_deeper_than_the_limit_once_expanded_is_refused(levels):
    """Issue 24: each alias nesting the previous one stays shallow as written, and is 1,200 levels
    deep once expanded (which crashed the line stripper with a RecursionError: exit 70)."""
    items = ["&a0 x"] + [f"&a{i} [*a{i - 1}]" for i in range(1, levels)]
    with pytest.raises(YamlProblem, match="levels deep once expanded"):
        loads("defs: [" + ", ".join(items) + "]\n")


def test_a_shallow_alias_chain_still_loads():
    items = ["&a0 x"] + [f"&a{i} [*a{i - 1}]" for i in range(1, 20)]
    assert loads("defs: [" + ", ".join(items) + "]\n")["defs"][0] == "x"
