"""One case of a file: its keys, turns, users and the keys a case has beside its turns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness import layer as layer_registry
from harness.cases.keys import ACTIONS, CASE_KEYS, ENGINE_DEFAULTS, MAX_USERS, TURN_KEYS, USER_RE, _Collector, _strip
from harness.cases.turns import _turn
from harness.schema.yamlload import LINE
from harness.types import CASE_ID_RE, CHANNELS, Case, Turn


#: What CASE_ID_RE asks, in words ("[a-z0-9-]+" said nothing of the dashes it refuses).
ID_RULE = ("must be lowercase letters and digits in words joined by single dashes ([a-z0-9]+(-[a-z0-9]+)*: no "
           "leading, trailing or double dash; `--` marks a derived variant's id)")
ID_FIX = "use lowercase letters, digits and single dashes, e.g. url-malformed-scheme"


def _users(merged: dict, turns: list[Turn], *, file: str, case: str, line: int | None, out: _Collector) -> tuple | None:
    """Validate ``users:``, each turn's ``as:`` and the overlap groups; the users, or None."""
    users = merged.get("users")
    if users is None:
        if any(t.user for t in turns):
            out.add("a turn says as: but the case has no users", file=file, case=case, line=line,
                    fix="add users: [alice, bob] to the case")
            return None
        if any(t.overlap for t in turns):
            out.add("overlap needs several users", file=file, case=case, line=line,
                    fix="add users: [alice, bob] and say who sends each turn with as:")
            return None
        return ()
    users = _strip(users)
    if (not isinstance(users, list) or not 2 <= len(users) <= MAX_USERS
            or not all(isinstance(u, str) and USER_RE.match(u) for u in users) or len(set(users)) != len(users)):
        out.add(f"users must be a list of 2 to {MAX_USERS} distinct names like alice, got {users!r}", file=file,
                case=case, line=line, fix="users: [alice, bob]")
        return None
    for i, t in enumerate(turns):
        if t.user and t.user not in users:
            out.add(f"turn {i}: as: {t.user!r} is not one of the users {users}", file=file, case=case, line=line)
            return None
    if turns[-1].overlap:
        out.add(f"turn {len(turns) - 1}: the last turn cannot overlap a next one", file=file, case=case, line=line,
                fix="remove overlap: true from the last turn")
        return None
    for group in overlap_groups(turns):
        who = [turns[i].user or users[0] for i in group]
        if len(set(who)) != len(who):
            out.add(f"turns {group[0]}-{group[-1]} overlap and one user sends two of them", file=file, case=case,
                    line=line, fix="overlapping turns come from different users (their replies are told apart by chat)")
            return None
        if len(group) > 1 and any(turns[i].kind in ("redeliver", "edit") or turns[i].faults for i in group):
            out.add(f"turns {group[0]}-{group[-1]}: overlapping turns take no redeliver, edit or fault", file=file,
                    case=case, line=line)
            return None
    return tuple(users)


def overlap_groups(turns) -> list[list[int]]:
    """The turn indexes that are sent together: each overlapping turn with the ones after it."""
    groups: list[list[int]] = []
    current: list[int] = []
    for i, t in enumerate(turns):
        current.append(i)
        if not t.overlap:
            groups.append(current)
            current = []
    if current:
        groups.append(current)
    return groups


def _case(raw: Any, *, layer: str, defaults: dict, file: str, out: _Collector,
          docs_dir: Path | None = None) -> Case | None:
    if not isinstance(raw, dict):
        out.add("each entry of cases must be a table", file=file)
        return None
    out.single_turn = False
    errors_before = len(out.errors)
    line = raw.get(LINE)
    merged = {**defaults, **raw}
    cid = merged.get("id")
    if not isinstance(cid, str) or not CASE_ID_RE.match(cid):
        out.add(f"case id {cid!r} {ID_RULE}", file=file, case=str(cid or ""), line=line, fix=ID_FIX)
        return None
    unknown = [k for k in merged if k != LINE and k not in CASE_KEYS]
    if unknown:
        out.add(f"unknown key(s) {unknown}", file=file, case=cid, line=line,
                fix=f"case keys: {', '.join(sorted(CASE_KEYS))}")
        return None
    channel = merged.get("channel", "telegram")
    if channel not in CHANNELS:
        out.add(f"unknown channel {channel!r}", file=file, case=cid, line=line, fix="channel: telegram or whatsapp")
        return None
    single = {k: merged[k] for k in TURN_KEYS if k in merged}
    if "turns" in merged:
        if any(k in merged for k in ACTIONS) or "expect" in raw:
            out.add("has both turns and a single-turn action/expect", file=file, case=cid, line=line,
                    fix="put every action and expect inside turns")
            return None
        raw_turns = merged["turns"]
        if not isinstance(raw_turns, list) or not raw_turns:
            out.add("turns must be a non-empty list", file=file, case=cid, line=line)
            return None
        if isinstance(_strip(merged.get("tools")), dict):  # a case's tools: script applies to every turn
            raw_turns = [{**rt, "tools": {**_strip(merged["tools"]), **(_strip(rt.get("tools")) or {})}}
                         if isinstance(rt, dict) and isinstance(_strip(rt.get("tools", {})), dict) else rt
                         for rt in raw_turns]
        elif "tools" in merged:
            out.add(f"tools must be a table of tool name: result, got {_strip(merged['tools'])!r}", file=file,
                    case=cid, line=line, fix="e.g. tools: {create_order: {json: {id: A-17}}}")
            return None

        if "model" in merged:  # a case's (or the file's default) model script: every turn without its own
            raw_turns = [{**rt, "model": merged["model"]} if isinstance(rt, dict) and "model" not in rt else rt
                         for rt in raw_turns]
    else:
        raw_turns = [{**single, LINE: line}]
        out.single_turn = True  # until the next case (_case resets it)
    turns = []
    for i, rt in enumerate(raw_turns):
        if not isinstance(rt, dict):
            out.add(f"turn {i} must be a table", file=file, case=cid, line=line)
            return None
        t = _turn(rt, channel=channel, file=file, case=cid, index=i, out=out)
        if t is None:
            return None
        home = layer_registry.get(layer)
        foreign = [n for n in t.disabled if not n.startswith("anomaly.") and n not in ENGINE_DEFAULTS
                   and n not in (home.default_names if home else ())]
        if foreign:
            out.add(f"turn {i}: {', '.join(f'{n}: false' for n in foreign)}: the {layer} layer does not add "
                    f"{'this check' if len(foreign) == 1 else 'these checks'} by default", file=file, case=cid,
                    line=rt.get(LINE, line), fix=f"remove it (the {layer} layer adds "
                    f"{', '.join(home.default_names) if home and home.default_names else 'no check'} by default)")
        turns.append(t)
    users = _users(merged, turns, file=file, case=cid, line=line, out=out)
    if users is None:
        return None
    variants = _strip(merged.get("variants"))
    if variants == "none":
        variants = ()
    elif variants == "all":  # docs/CASES.md: variants: all (was refused as not a list)
        variants = ["all"]
    elif variants is not None and not (isinstance(variants, list) and variants
                                       and all(isinstance(v, str) and v for v in variants)):
        out.add(f"variants must be a list of variant kinds, all or none, got {variants!r}", file=file, case=cid, line=line,
                fix="e.g. variants: [typos, case] (docs/CASES.md lists the kinds), or variants: none")
        return None
    if not any(t.checks for t in turns) and not any(e.case == cid for e in out.errors[errors_before:]):
        # (a case whose checks were refused above has its errors already: "has no checks" would only mislead)
        out.add("has no checks: a case without a check can never fail", file=file, case=cid, line=line,
                fix="add an expect table, e.g. expect: {replies: {min: 1}}")
        return None
    tags = merged.get("tags", [])
    if isinstance(tags, str):
        tags = [tags]
    timeout = merged.get("timeout_s")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        out.add("timeout_s must be a positive number", file=file, case=cid, line=line)
        return None
    source = merged.get("source", "")
    if not isinstance(source, str) or (not source and any(s.name == "critic.factuality" for t in turns for s in t.checks)):
        out.add("critic.factuality needs source: <document in fixtures/documents>", file=file, case=cid, line=line,
                fix="add source: paper.pdf (the document the case is about) to the case")
        return None
    if source and docs_dir is not None and not _document_exists(docs_dir, source):
        out.add(f"source: {source!r} is not a document in {docs_dir}", file=file, case=cid,
                line=getattr(raw, "key_lines", {}).get("source", line),
                fix="name a file of the documents folder ([sandbox] docs_dir), e.g. source: paper.pdf")
        return None
    for i, t in enumerate(turns):  # a document's content: a file of the documents folder (channels/media.py)
        doc = t.options.get("source") if t.kind == "document" else None
        if doc is not None and (not isinstance(doc, str) or not doc or
                                (docs_dir is not None and not _document_exists(docs_dir, doc))):
            out.add(f"turn {i}: document source {doc!r} is not a document in {docs_dir or 'the documents folder'}",
                    file=file, case=cid, line=line,
                    fix="name a file of the documents folder ([sandbox] docs_dir), e.g. source: paper.pdf")
            return None
    if "judges" in merged:
        from harness.schema.frames import validate as frame_error

        problem = frame_error(_strip(merged["judges"]))
        if problem:
            out.add(problem, file=file, case=cid, line=line, fix="see harness/schema/frames.py")
            return None
    baseline = _strip(merged.get("baseline"))
    if baseline is not None:
        from harness.checks.baseline.settings import case_setting_error

        problem = case_setting_error(baseline)
        if problem:
            problem, _, fix = problem.partition("; fix: ")
            out.add(problem if problem.startswith("baseline") else f"baseline: {problem}", file=file, case=cid,
                    line=line, fix=fix or "baseline: false, or e.g. baseline: {facts: false, latency: false} "
                                          "(docs/CASES.md 'Baseline checks' lists the kinds)")
            return None
    return Case(id=cid, layer=layer, channel=channel, turns=tuple(turns), tags=tuple(str(t) for t in tags),
                file=file, timeout_s=float(timeout) if timeout else None,
                description=str(merged.get("description", "")), source=source, users=users,
                variants=tuple(variants) if variants is not None else None,
                baseline=dict(baseline) if isinstance(baseline, dict) else baseline)



def _document_exists(docs_dir: Path, name: str) -> bool:
    try:
        path = (docs_dir / name).resolve()
        return path.is_file() and docs_dir.resolve() in path.parents
    except (OSError, RuntimeError, ValueError):
        return False

