"""Data snapshots ("golden data" tests): a DataFrame's fingerprint kept in a small JSON file committed with the tests,
compared on later runs, rewritten on request.

The file (``dsha-snapshot-v1``) holds the table's digest, row count, canonical schema and algorithm, and per column
its canonical type and the digest of that column alone (the digest of ``df.select(column)``: the multiset of its
values), all computed in one Spark job. A mismatch says how the row count moved and which columns changed.
"""
from __future__ import annotations

import json
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Union

import dsha
from dsha import functions as fn
from dsha.dependencies import F
from dsha.errors import DshaWarning

__all__ = ["FORMAT", "SNAPSHOT_DIRECTORY", "Snapshot", "assert_snapshot", "snapshot_of", "snapshot_path"]

FORMAT = "dsha-snapshot-v1"
SNAPSHOT_DIRECTORY = "__dsha_snapshots__"
UPDATE_HINT = "run pytest with --dsha-update-snapshots (or assert_snapshot(..., update=True)) to accept the new data"

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class Snapshot:
    """A table's fingerprint as a snapshot file holds it; ``columns``: name -> {"type", "digest"}."""

    digest: str
    rows: int
    schema: str
    algorithm: str
    columns: Dict[str, Dict[str, str]] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "algorithm": self.algorithm, "digest": self.digest, "rows": self.rows,
                           "schema": self.schema, "columns": self.columns}, indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_json(cls, text: str, path: str) -> Snapshot:
        try:
            data = json.loads(text)
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}, not {FORMAT}")
            return cls(digest=str(data["digest"]), rows=int(data["rows"]), schema=str(data["schema"]),
                       algorithm=str(data["algorithm"]),
                       columns={str(c): {"type": str(v["type"]), "digest": str(v["digest"])}
                                for c, v in data["columns"].items()})
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise ValueError(f"{path}: not a dsha snapshot ({type(e).__name__}: {e}); delete it or rewrite it with "
                             "--dsha-update-snapshots") from None


def _column_type(name: str, schema: str) -> str:
    """The type in a one-column canonical schema ``struct<"name":type>``."""
    for quoted_name in (json.dumps(name, ensure_ascii=False), json.dumps(name)):
        prefix = f"struct<{quoted_name}:"
        if schema.startswith(prefix) and schema.endswith(">"):
            return schema[len(prefix):-1]
    return schema


def snapshot_of(df: Any) -> Snapshot:
    """The snapshot of ``df``: its fingerprint and each column's, in one Spark job."""
    names = list(df.columns)
    repeated = sorted({c for c in names if names.count(c) > 1})
    if repeated:
        raise ValueError(f"a snapshot needs distinct column names: {', '.join(repeated)} is repeated")
    dsha.ensure_loaded(df.sparkSession)
    parts = [fn.dsha_fingerprint("*").alias("t")] + [
        fn.dsha_fingerprint(F.col("`" + c.replace("`", "``") + "`")).alias(f"c{i}") for i, c in enumerate(names)]
    row = df.agg(*parts).first()
    table = row["t"]
    return Snapshot(digest=table["digest"], rows=int(table["rows"]), schema=table["schema"],
                    algorithm=table["algorithm"],
                    columns={c: {"type": _column_type(c, row[f"c{i}"]["schema"]), "digest": row[f"c{i}"]["digest"]}
                             for i, c in enumerate(names)})


def snapshot_path(test_file: PathLike, name: str) -> str:
    """Where the pytest fixture keeps snapshot ``name`` of a test file:
    ``<its folder>/__dsha_snapshots__/<its module name>/<name>.json``."""
    if not name or name.startswith(".") or any(s in name for s in ("/", "\\", os.sep)):
        raise ValueError(f"snapshot name {name!r}: a file name without a folder, not starting with '.'")
    folder, module = os.path.split(os.fspath(test_file))
    return os.path.join(folder, SNAPSHOT_DIRECTORY, os.path.splitext(module)[0], name + ".json")


def _write(path: str, snapshot: Snapshot) -> None:
    """Written whole or not at all (a temporary file renamed over it)."""
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".dsha-snapshot-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(snapshot.to_json())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def _names(columns: List[str]) -> str:
    return ", ".join(columns[:12]) + (f", and {len(columns) - 12} more" if len(columns) > 12 else "")


def differences(stored: Snapshot, now: Snapshot) -> List[str]:
    """What moved from ``stored`` to ``now``, in lines: the row count, the columns added, removed, retyped and
    changed (their values, as multisets), the columns unchanged."""
    lines = []
    if stored.algorithm != now.algorithm:
        lines.append(f"algorithm: {stored.algorithm} -> {now.algorithm}")
    moved = now.rows - stored.rows
    lines.append(f"rows: {stored.rows:,} -> {now.rows:,} ({moved:+,})" if moved else f"rows: {now.rows:,} (same)")
    old, new = stored.columns, now.columns
    added = [f"{c} {new[c]['type']}" for c in new if c not in old]
    removed = [f"{c} {old[c]['type']}" for c in old if c not in new]
    both = [c for c in new if c in old]
    retyped = [f"{c} {old[c]['type']} -> {new[c]['type']}" for c in both if old[c]["type"] != new[c]["type"]]
    changed = [c for c in both if old[c]["type"] == new[c]["type"] and old[c]["digest"] != new[c]["digest"]]
    same = [c for c in both if old[c] == new[c]]
    for title, found in (("columns added", added), ("columns removed", removed), ("columns retyped", retyped),
                         ("columns whose values changed", changed)):
        if found:
            lines.append(f"{title}: {_names(found)}")
    if not (added or removed or retyped or changed) and stored.schema == now.schema and moved == 0:
        lines.append("every column holds the same values, combined into rows differently")
    if same:
        lines.append(f"columns unchanged: {_names(same)}")
    return lines


def assert_snapshot(df: Any, path: PathLike, *, update: bool = False) -> None:
    """Asserts that ``df`` has the fingerprint stored in the snapshot file ``path``; writes the file when there is
    none (with a ``DshaWarning``: commit it), and rewrites it instead of failing when ``update`` is true. On a mismatch
    the ``AssertionError`` names the file, how the row count moved and which columns changed. The pytest fixture
    ``dsha_snapshot(df, name)`` calls this with a path beside the test file and ``update`` from
    ``--dsha-update-snapshots``."""
    __tracebackhide__ = True
    path = os.fspath(path)
    now = snapshot_of(df)
    if not os.path.exists(path):
        _write(path, now)
        warnings.warn(f"dsha snapshot written: {path} ({now.rows:,} rows); commit it with the test", DshaWarning,
                      stacklevel=2)
        return
    with open(path, encoding="utf-8") as f:
        stored = Snapshot.from_json(f.read(), path)
    if stored.digest == now.digest:
        return
    if update:
        _write(path, now)
        warnings.warn(f"dsha snapshot updated: {path}", DshaWarning, stacklevel=2)
        return
    lines = [f"data differs from snapshot {path}:"] + [f"  {line}" for line in differences(stored, now)]
    raise AssertionError("\n".join([*lines, f"  ({UPDATE_HINT})"]))
