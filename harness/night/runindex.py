"""The index of stored runs (``PREFIX/index.json``): one entry per run (a sharded run's
shards report into it), written read-modify-write and read back, rebuilt from the stored
runs by ``harness upload --reindex``."""

from __future__ import annotations

import json
import random
import re
import time
from datetime import datetime, timezone
from typing import Any, Mapping

from harness.errors import StorageError
from harness.night.store import LAST, S3Store

INDEX_SCHEMA = "harness.index/1"


#: The summary fields the index keeps (the full summary is in the run's results.json).
_INDEX_COUNTS = ("planned", "executed", "decidable", "passed", "soft", "failed", "errored", "unavailable",
                 "skipped", "cost_usd", "verdict")


def index_entry(results: Mapping[str, Any], key_prefix: str) -> dict[str, Any]:
    """What the index keeps of one run (enough to list and pick runs without opening them)."""
    manifest = results.get("manifest") or {}
    return {"run_id": results.get("run_id", ""), "prefix": key_prefix,
            "started_at": results.get("started_at", ""), "finished_at": results.get("finished_at", ""),
            "verdict": (results.get("summary") or {}).get("verdict", ""), "exit_code": results.get("exit_code"),
            "summary": {k: v for k, v in (results.get("summary") or {}).items() if k in _INDEX_COUNTS},
            "target": results.get("target") or {},
            "golden_version": results.get("golden_version", ""),
            "config_hash": manifest.get("config_hash", ""),
            "layers": sorted((results.get("layers") or {}).keys())}


def read_index(store: S3Store) -> dict[str, Any]:
    """The stored index (a new, empty one only when there is none)."""
    return _parse_index(store, store.get(store.sc.key("index.json")))


def _parse_index(store: S3Store, raw: bytes | None) -> dict[str, Any]:
    """``raw`` as the index. Anything that is there but is not an index (a proxy's or captive
    portal's HTML page answered with 200, a truncated body) is refused: starting a new index
    over it would drop every earlier night from history, diff and the baseline."""
    if raw is None:
        return {"schema": INDEX_SCHEMA, "runs": []}
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        data = None
    if (not isinstance(data, dict) or not isinstance(data.get("runs"), list)
            or not all(isinstance(e, dict) for e in data["runs"])):
        from harness.redact import inert

        start = inert(raw[:80].decode("utf-8", "replace")).replace("\n", " ")
        raise StorageError(
            f"{store.sc.url}/index.json is not a harness index (it starts {start!r}); refusing to write a new "
            "index over it, which would drop every earlier night",
            fix="check [storage] endpoint_url (a proxy or captive portal may be answering in its place); "
                "if the object is really damaged, `harness upload --reindex` rebuilds it from the stored runs")
    return data


def _upsert(index: dict[str, Any], entry: Mapping[str, Any]) -> None:
    runs = index["runs"]
    existing = next((e for e in runs if e.get("run_id") == entry["run_id"]), None)
    if "shard_entry" in entry:  # a shard reports into its run's entry
        if existing is None:
            existing = {"run_id": entry["run_id"], "prefix": entry["prefix"], "verdict": "incomplete",
                        "started_at": entry["shard_entry"].get("started_at", "")}
            runs.append(existing)
        shard = entry["shard"]
        existing.setdefault("shards", {})[f"{shard['index']}/{shard['count']}"] = entry["shard_entry"]
        existing["shard_count"] = shard["count"]
    elif existing is None:
        runs.append(dict(entry))
    else:
        shards = existing.get("shards")
        existing.clear()
        existing.update(entry)
        if shards:
            existing["shards"] = shards
    runs.sort(key=lambda e: (str(e.get("started_at", "")), str(e.get("run_id", ""))))


def _holds(index: Mapping[str, Any], entry: Mapping[str, Any]) -> bool:
    found = next((e for e in index.get("runs", ()) if e.get("run_id") == entry["run_id"]), None)
    if found is None:
        return False
    if "shard_entry" in entry:
        s = entry["shard"]
        return f"{s['index']}/{s['count']}" in (found.get("shards") or {})
    return found.get("prefix") == entry.get("prefix") and found.get("finished_at") == entry.get("finished_at")


def update_index(store: S3Store, entry: Mapping[str, Any], tries: int = 6) -> None:
    """Read-modify-write ``index.json`` with one run's entry, then read it back to check.

    Object storage has no portable compare-and-swap (OCI's compatibility API lacks
    conditional puts), so concurrent writers (shards finishing together) are handled by
    verifying after writing and writing again, after a random pause, when another writer's
    version replaced ours. ``harness upload --reindex`` rebuilds the index from the runs.
    """
    key = store.sc.key("index.json")
    for attempt in range(tries):
        raw, etag = store.get_tagged(key)
        index = _parse_index(store, raw)
        if raw is None and store.list(store.sc.key("runs") + "/"):
            # no index, yet runs are stored (deleted, or a 404 from whatever answered): tonight
            # alone would drop them from history, diff and the baseline; rebuilt from them first
            index = rebuild_index(store, write=False)
        _upsert(index, entry)
        index["schema"] = INDEX_SCHEMA
        index["updated_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        body = json.dumps(index, indent=1).encode("utf-8")
        # a conditional write where the endpoint has one (S3, recent MinIO): written only over
        # the version read; otherwise the write is checked by reading it back
        written = store.put_if(key, body, etag, "application/json; charset=utf-8")
        if written is False:
            time.sleep(random.uniform(0.05, 0.3))
            continue
        if written is None:
            store.put(key, body, "application/json; charset=utf-8")
        time.sleep(random.uniform(0.05, 0.2) if attempt else 0.0)
        if _holds(read_index(store), entry):
            return
        time.sleep(random.uniform(0.1, 0.5))
    raise StorageError("index.json kept being overwritten by concurrent writers",
                       fix="harness upload --reindex rebuilds it from the stored runs")


def _get_json(store: S3Store, key: str) -> Any:
    """A stored JSON object, or None when it is missing or not JSON (skipped, not fatal)."""
    try:
        return json.loads(store.get(key) or b"")
    except (ValueError, RecursionError):
        return None


def get_results(store: S3Store, key: str) -> dict[str, Any] | None:
    """A stored results.json as ``harness run`` writes it, or None (skipped, with a warning) when it
    is missing, not JSON, or of another shape: an index entry or a merged report is never built
    from a file edited into something else (it crashed ``--reindex`` and ``merge``, exit 70)."""
    import logging

    from harness.report.jsonread import results_problem

    data = _get_json(store, key)
    if data is None:
        return None
    problem = ("it is not a JSON object" if not isinstance(data, dict) or not isinstance(data.get("cases"), list)
               else results_problem(data))
    if problem:
        logging.getLogger(__name__).warning("skipped %s: not as `harness run` wrote it: %s", key, problem)
        return None
    return data


def rebuild_index(store: S3Store, write: bool = True) -> dict[str, Any]:
    """Build ``index.json`` again from every stored results.json (run level and shard level);
    written unless ``write`` is False."""
    index: dict[str, Any] = {"schema": INDEX_SCHEMA, "runs": []}
    for key in store.list(store.sc.key("runs") + "/"):
        if not key.endswith("/" + LAST):
            continue
        results = get_results(store, key)
        if results is None:
            continue
        where = key[: -len(LAST) - 1]
        m = re.search(r"^(.*)/shards/(\d+)-of-(\d+)$", where)
        if m:
            shard = {"index": int(m.group(2)), "count": int(m.group(3))}
            _upsert(index, {"run_id": results.get("run_id", ""), "prefix": m.group(1), "shard": shard,
                            "shard_entry": index_entry(results, where)})
        else:
            _upsert(index, index_entry(results, where))
    index["updated_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    if write and not index["runs"]:
        try:
            kept = len(_parse_index(store, store.get(store.sc.key("index.json")))["runs"])
        except StorageError:
            kept = 0
        if kept:  # a wrong prefix, an endpoint answering for another bucket: never an empty index over N runs
            raise StorageError(f"--reindex found no stored run under {store.sc.url}/runs/, yet index.json lists "
                               f"{kept}; refusing to replace it with an empty index",
                               fix="check [storage] url and endpoint_url point at the bucket and prefix the runs "
                                   "were uploaded to")
    if write:
        store.put(store.sc.key("index.json"), json.dumps(index, indent=1).encode("utf-8"),
                  "application/json; charset=utf-8")
    return index


def load_run(store: S3Store, run_id: str) -> dict[str, Any] | None:
    """One stored run's results.json (the merged one for a sharded run), found through the index."""
    entry = next((e for e in read_index(store)["runs"] if e.get("run_id") == run_id), None)
    if entry is None:
        return None
    raw = store.get(f"{entry['prefix']}/{LAST}")
    return json.loads(raw) if raw else None
