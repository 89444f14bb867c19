"""The shape of a pending-upload spool file (``reports/.pending/<run>.json``, harness.night.storage):
what an entry must hold before ``harness upload --pending`` acts on it. One edited by hand, or by
another program, is left alone and said; one naming a file outside its run folder, or a key
outside its prefix, is never uploaded (issue 24)."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Mapping


def spool_problem(d: Any) -> str | None:
    """Why ``d`` is not a spool entry the harness wrote (None when it is one)."""
    if not isinstance(d, Mapping):
        return f"it holds a {type(d).__name__}, not an object"
    for key in ("run_id", "run_dir", "key_prefix"):
        if not isinstance(d.get(key), str) or not d[key]:
            return f"{key} is {d.get(key)!r}, not text"
    if not isinstance(d.get("files"), list):
        return "files is not a list"
    for i, item in enumerate(d["files"]):
        if not isinstance(item, Mapping) or not all(isinstance(item.get(k), str) for k in ("rel", "key", "md5")):
            return f"files[{i}] is not a {{rel, key, size, md5}} object"
        rel = PurePosixPath(item["rel"])
        if rel.is_absolute() or ".." in rel.parts or not item["key"].startswith(d["key_prefix"] + "/"):
            return f"files[{i}] names {item['rel']!r} -> {item['key']!r}, outside its run folder or key prefix"
    shard = d.get("shard")
    if shard is not None and not (isinstance(shard, Mapping) and all(
            isinstance(shard.get(k), int) and not isinstance(shard.get(k), bool) for k in ("index", "count"))):
        return "shard is not an {index, count} object"
    for key, kind in (("index", Mapping), ("done", list)):
        if d.get(key) is not None and not isinstance(d[key], kind):
            return f"{key} is {type(d[key]).__name__}"
    if not isinstance(d.get("attempts", 0), int) or not isinstance(d.get("created_at", ""), str):
        return "attempts or created_at is of another type"
    return None
