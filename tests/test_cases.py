"""The case loader: good files load; every kind of bad file is a fixture error naming file, case and fix."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.cases import load_cases
from harness.cli import main
from harness.errors import FixtureError


def write(root: Path, layer: str, name: str, text: str) -> Path:
    folder = root / layer
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


GOOD = """
layer: robustness
defaults: {channel: telegram}
cases:
  - id: url-bad
    tags: [url]
    send: "summarize htps://example.com/doc.pdf for twitter"
    expect:
      reply: {regex: "(?i)invalid", not_contains: ["Traceback"]}
      replies: {min: 1, max: 1}
      tools_not_called: [fetch_document]
  - id: multi
    channel: whatsapp
    turns:
      - send: "summarize {docs}/paper.pdf for linkedin"
      - send: "stop"
        expect: {reply: {regex: "(?i)cancel"}}
  - id: long-paste
    send: "{words:50}"
    expect: {replies: {exact: 1}}
"""


def test_good_file_loads(tmp_path):
    write(tmp_path, "robustness", "a.yaml", GOOD)
    cases = load_cases(tmp_path)
    assert [c.id for c in cases] == ["url-bad", "multi", "long-paste"]
    first = cases[0]
    assert first.channel == "telegram" and first.tags == ("url",)
    assert [s.name for s in first.turns[0].checks] == ["reply.regex", "reply.not_contains", "replies",
                                                       "tools_not_called"]
    assert cases[1].channel == "whatsapp" and len(cases[1].turns) == 2
    assert cases[1].turns[0].checks == ()


def test_selection_by_layer_and_glob(tmp_path):
    write(tmp_path, "robustness", "a.yaml", GOOD)
    assert [c.id for c in load_cases(tmp_path, globs=["url-*"])] == ["url-bad"]
    assert load_cases(tmp_path, layers=["cost"]) == []


BAD = [
    ("yaml syntax", "layer: robustness\ncases: [\n  - id: x\n", "YAML syntax error"),
    ("unknown check", """
        layer: robustness
        cases:
          - id: a
            send: hi
            expect: {reply: {regexp: "x"}}
        """, "unknown check 'reply.regexp'"),
    ("bad regex", """
        layer: robustness
        cases:
          - id: a
            send: hi
            expect: {reply: {regex: "(unclosed"}}
        """, "invalid regular expression"),
    ("no checks", """
        layer: robustness
        cases:
          - id: a
            send: hi
        """, "has no checks"),
    ("unknown placeholder", """
        layer: robustness
        cases:
          - id: a
            send: "see {documents}/x.pdf"
            expect: {replies: {min: 1}}
        """, "unknown placeholder {documents}"),
    ("bad id", """
        layer: robustness
        cases:
          - id: Bad_Id
            send: hi
            expect: {replies: {min: 1}}
        """, "must be lowercase letters and digits in words joined by single dashes"),
    ("two actions", """
        layer: robustness
        cases:
          - id: a
            send: hi
            sticker: {}
            expect: {replies: {min: 1}}
        """, "exactly one action"),
    ("edit on whatsapp", """
        layer: robustness
        cases:
          - id: a
            channel: whatsapp
            turns:
              - send: hi
              - edit: ho
                expect: {replies: {min: 1}}
        """, "WhatsApp has no message edits"),
    ("bad replies bounds", """
        layer: robustness
        cases:
          - id: a
            send: hi
            expect: {replies: {min: 3, max: 1}}
        """, "min 3 is greater than max 1"),
    ("bad tool script", """
        layer: robustness
        cases:
          - id: a
            send: hi
            tools: {create_order: {jsn: {id: 1}}}
            expect: {replies: {min: 1}}
        """, "tools create_order: unknown key(s) ['jsn']"),
    ("tool script not a table", """
        layer: robustness
        cases:
          - id: a
            send: hi
            tools: [create_order]
            expect: {replies: {min: 1}}
        """, "tools"),
    ("bad tool_args", """
        layer: robustness
        cases:
          - id: a
            send: hi
            expect: {tool_args: {create_order: 3}}
        """, "expect.tool_args.create_order: must be a table or a list, got 3"),
    ("tools fault on the llm", """
        layer: robustness
        cases:
          - id: a
            send: hi
            fault: {llm: {status: 500, tool: create_order}}
            expect: {replies: {min: 1}}
        """, "applies to tools faults only"),
    ("unknown layer", """
        layer: robustnes
        cases:
          - id: a
            send: hi
            expect: {replies: {min: 1}}
        """, "is not one of"),
]


@pytest.mark.parametrize("label,text,message", BAD, ids=[b[0] for b in BAD])
def test_bad_files_are_fixture_errors(tmp_path, label, text, message):
    path = write(tmp_path, "robustness", "bad.yaml", text)
    with pytest.raises(FixtureError) as info:
        load_cases(tmp_path)
    rendered = info.value.render()
    assert message in rendered
    assert str(path) in rendered


def test_tool_scripts_load_per_turn_and_merge_over_the_case(tmp_path):
    write(tmp_path, "multiturn", "tools.yaml", """
        layer: multiturn
        cases:
          - id: order
            tools: {create_order: {json: {id: A-17}}, confirm: {json: {ok: true}}}
            turns:
              - send: "order 3 widgets"
                fault: {tools: {status: 503, retry_after: 1, times: 1, tool: create_order}}
                expect: {tool_args: {create_order: {quantity: 3}}, retry_wait: {of: create_order}}
              - send: "confirm"
                tools: {confirm: [{status: 500}, {json: {done: true}}]}
                expect: {tool_order: [{confirm: {order: A-17}}, telegram.sendMessage]}
          - id: single
            send: hi
            tools: {lookup: {json: {hits: []}}}
            expect: {replies: {min: 1}}
        """)
    by = {c.id: c for c in load_cases(tmp_path)}
    first, second = by["order"].turns
    assert first.tools == {"create_order": {"json": {"id": "A-17"}}, "confirm": {"json": {"ok": True}}}
    assert second.tools["confirm"] == [{"status": 500}, {"json": {"done": True}}]
    assert second.tools["create_order"] == {"json": {"id": "A-17"}}
    assert by["single"].turns[0].tools == {"lookup": {"json": {"hits": []}}}


def test_error_names_case_and_line(tmp_path):
    path = write(tmp_path, "robustness", "bad.yaml", """
        layer: robustness
        cases:
          - id: fine
            send: hi
            expect: {replies: {min: 1}}
          - id: broken
            send: hi
            expect: {reply: {regex: "(x"}}
        """)
    with pytest.raises(FixtureError) as info:
        load_cases(tmp_path)
    rendered = info.value.render()
    # the line of the key whose value is wrong (the case starts at 7, its expect is at 9)
    assert f"{path}:9: case 'broken': expect.reply.regex: invalid regular expression" in rendered


def test_duplicate_ids_across_files(tmp_path):
    write(tmp_path, "robustness", "a.yaml", GOOD)
    write(tmp_path, "robustness", "b.yaml", """
        layer: robustness
        cases:
          - id: url-bad
            send: hi
            expect: {replies: {min: 1}}
        """)
    with pytest.raises(FixtureError, match="duplicate case id"):
        load_cases(tmp_path)


def test_all_errors_reported_at_once(tmp_path):
    write(tmp_path, "robustness", "bad.yaml", """
        layer: robustness
        cases:
          - id: one
            send: hi
          - id: two
            send: hi
            expect: {nope: 1}
        """)
    with pytest.raises(FixtureError) as info:
        load_cases(tmp_path)
    text = info.value.render()
    assert "case 'one'" in text and "case 'two'" in text


def test_cli_exits_2_on_fixture_error_and_runs_nothing(tmp_path, capsys):
    write(tmp_path, "robustness", "bad.yaml", "layer: robustness\ncases: [\n")
    out = tmp_path / "out"
    code = main(["run", "--fixtures", str(tmp_path), "--out", str(out), "--config", str(_empty_config(tmp_path))])
    assert code == 2
    assert not out.exists()
    assert "YAML syntax error" in capsys.readouterr().err


def test_cli_check_lists_cases(tmp_path, capsys):
    write(tmp_path, "robustness", "a.yaml", GOOD)
    code = main(["check", "--fixtures", str(tmp_path), "--config", str(_empty_config(tmp_path))])
    assert code == 0
    out = capsys.readouterr().out
    assert "url-bad" in out and "3 cases would run" in out


def _empty_config(tmp_path: Path) -> Path:
    cfg = tmp_path / "harness.toml"
    cfg.write_text('[target]\nname = "nothing"\n')
    return cfg


def test_env_overrides_keep_types_and_reach_target_env(tmp_path):
    from harness.config import load_config
    from harness.errors import ConfigError

    cfg = _empty_config(tmp_path)
    c = load_config(cfg, environ={"HARNESS_TARGET_VERSION": "1.10", "HARNESS_SANDBOX_SETTLE_S": "0.3",
                                  "HARNESS_TARGET_ENV_MY_FLAG": "{port}", "HARNESS_SANDBOX_CONCURRENCY": "2"})
    assert (c.target.version, c.sandbox.settle_s, c.sandbox.concurrency) == ("1.10", 0.3, 2)
    assert c.target.env["MY_FLAG"] == "{port}"
    with pytest.raises(ConfigError, match="HARNESS_SANDBOX_CONCURRENCY"):
        load_config(cfg, environ={"HARNESS_SANDBOX_CONCURRENCY": "many"})


def test_check_validates_goldens_and_sections_like_run(tmp_path, capsys):
    write(tmp_path, "robustness", "a.yaml", GOOD)
    golden = tmp_path / "golden"
    golden.mkdir()
    (golden / "VERSION").write_text("1\n")
    (golden / "broken.yaml").write_text("case: [unclosed\n")
    cfg = _empty_config(tmp_path)
    assert main(["check", "--fixtures", str(tmp_path), "--config", str(cfg), "--golden", str(golden)]) == 2
    assert "broken.yaml" in capsys.readouterr().err
    (golden / "broken.yaml").unlink()
    cfg.write_text('[target]\nname = "x"\n[alerts]\nwebhok_url_env = "X"\n')
    assert main(["check", "--fixtures", str(tmp_path), "--config", str(cfg), "--golden", str(golden)]) == 2
    assert "unknown key" in capsys.readouterr().err
