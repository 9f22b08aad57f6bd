"""Digests of Apache Iceberg table snapshots from per-file states keyed by the data files' immutable paths.

``dsha.fingerprint_iceberg(spark, "local.db.t", snapshot_id=None, state=FILE)`` equals
``dsha.fingerprint(spark.table("local.db.t"))`` (or, for a ``snapshot_id``, of ``SELECT * FROM local.db.t VERSION AS
OF id``), computed from the digest states
of the snapshot's data files (SPEC.md §11: states of disjoint parts merge into the state of the whole; §15 for this
cache). An Iceberg data file never changes once written, and neither does a delete file, so the live rows of a data
file are fixed by its path and the set of delete files that may apply to it; a state is kept under both, in a JSON
cache file ``state`` outside the table:

* an unchanged table (same snapshot, or the same data and delete files) is confirmed from metadata alone;
* a ``replace`` snapshot (``rewrite_data_files``, compaction, ``rewrite_position_delete_files``) changes no rows:
  per partition, the data files it added get the merged state of the ones it removed (a *group*), unread;
* the other data files — new ones, and those whose applicable delete files changed (merge-on-read deletes,
  updates) — are read in one Spark job, ``SELECT _file, dsha_state(...) ... GROUP BY _file`` at the snapshot, with
  Iceberg applying the deletes, one state per file.

Only Iceberg's public metadata tables are used (``.refs``, ``.snapshots``, ``.files``, ``.metadata_log_entries``),
through Spark SQL, and the table metadata file (its uuid; the partition specs, to prune reads).
"""
from __future__ import annotations

import gzip
import json
import struct
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from dsha.core.fingerprint import Fingerprint, PathFingerprint
from dsha.core.meta import table_meta_fingerprint
from dsha.core.states import parse
from dsha.dependencies import F
from dsha.errors import warn
from dsha.functions import dsha_state
from dsha.spark.bridge import jvm_api
from dsha.spark.digests import empty_state
from dsha.tables.units import CacheFormat, Cover, Groups, Unit, load_cache, result, save_cache

if TYPE_CHECKING:
    from dsha.spark.types import DataFrameLike, SparkSessionLike

__all__ = ["fingerprint_iceberg", "is_iceberg_table"]

# A data file's identity: (its path as the metadata names it; the sorted paths of the delete files that may apply).
Key = Tuple[str, Tuple[str, ...]]

CACHE = CacheFormat[Key](name="dsha-iceberg-states", caller="dsha.fingerprint_iceberg", table_kind="Iceberg table",
                         id_field="table_uuid", id_label="uuid", version_field="snapshot_id",
                         encode=lambda k: [k[0], list(k[1])], decode=lambda k: (str(k[0]), tuple(str(d) for d in k[1])))


class _File:
    __slots__ = ("key", "part", "path", "spec", "values")

    def __init__(self, key: Key, path: str, part: str, spec: int, values: Dict[str, Any]):
        self.key, self.path, self.part, self.spec = key, path, part, spec
        self.values = values  # partition field name -> value (None for null), for every field of .files' struct


def _q(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _sql_str(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


# -- metadata (Iceberg's metadata tables through Spark SQL) --------------------------------------------------------

def _current_snapshot(spark: Any, table: str) -> Optional[int]:
    rows = spark.sql(f"SELECT snapshot_id FROM {table}.refs WHERE name = 'main' AND type = 'BRANCH'").collect()
    return int(rows[0][0]) if rows and rows[0][0] is not None else None


def _snapshots(spark: Any, table: str) -> Dict[int, Tuple[Optional[int], str]]:
    """snapshot id -> (parent id, operation), for the snapshots the table still has."""
    return {int(r[0]): (int(r[1]) if r[1] is not None else None, r[2] or "")
            for r in spark.sql(f"SELECT snapshot_id, parent_id, operation FROM {table}.snapshots").collect()}


def _files(spark: Any, table: str, snapshot: int) -> List[_File]:
    """The data files of a snapshot, each keyed with the delete files that may apply to it (SPEC.md §15.2):
    those naming it as their referenced data file (deletion vectors, file-scoped position deletes), and those
    without a referenced data file in its partition (same spec id and partition values) or in a partition whose
    values are all null (an unpartitioned spec's equality deletes apply to every partition). A superset of
    Iceberg's rule (sequence numbers are not compared): more keys change than must, never fewer."""
    files = spark.sql(f"SELECT * FROM {table}.files VERSION AS OF {int(snapshot)}")
    cols = set(files.columns)
    names = files.schema["partition"].dataType.fieldNames() if "partition" in cols else []
    part = "to_json(partition)" if "partition" in cols else "'{}'"
    ref = "referenced_data_file" if "referenced_data_file" in cols else "CAST(NULL AS STRING)"
    rows = files.selectExpr("content", "file_path", "spec_id", f"{part} AS part", f"{ref} AS ref").collect()
    data = [r for r in rows if r["content"] == 0]
    by_ref: Dict[str, List[str]] = {}
    by_part: Dict[Tuple[int, str], List[str]] = {}
    everywhere: List[str] = []
    for r in rows:
        if r["content"] == 0:
            continue
        if r["ref"] is not None:
            by_ref.setdefault(r["ref"], []).append(r["file_path"])
        elif _all_null(r["part"]):
            everywhere.append(r["file_path"])
        else:
            by_part.setdefault((int(r["spec_id"]), r["part"] or "{}"), []).append(r["file_path"])
    out = []
    for r in data:
        p = r["part"] or "{}"
        deletes = by_ref.get(r["file_path"], []) + by_part.get((int(r["spec_id"]), p), []) + everywhere
        values = json.loads(p)
        out.append(_File((r["file_path"], tuple(sorted(set(deletes)))), r["file_path"], p, int(r["spec_id"]),
                         {n: values.get(n) for n in names}))
    return out


def _all_null(part_json: Optional[str]) -> bool:
    if not part_json:
        return True
    try:
        v = json.loads(part_json)
    except ValueError:
        return False
    return isinstance(v, dict) and all(x is None for x in v.values())


def _metadata(spark: Any, table: str) -> Optional[Dict[str, Any]]:
    """The table's current metadata file (Iceberg's table metadata JSON), or None where dsha cannot read it through
    Hadoop's file systems."""
    try:
        rows = spark.sql(f"SELECT file FROM {table}.metadata_log_entries ORDER BY timestamp DESC LIMIT 1").collect()
        jvm = spark.sparkContext._jvm
        f = jvm.org.apache.hadoop.fs.Path(rows[0][0])
        fs = f.getFileSystem(spark._jsc.hadoopConfiguration())
        stream = fs.open(f)
        try:
            data = bytes(jvm.org.apache.commons.io.IOUtils.toByteArray(stream))
        finally:
            stream.close()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        doc = json.loads(data.decode("utf-8"))
        return doc if isinstance(doc, dict) else None
    except Exception:
        return None


def _table_uuid(spark: Any, table: str, meta: Optional[Dict[str, Any]]) -> str:
    """The table's uuid (``table-uuid`` of its metadata); else its location."""
    if meta and meta.get("table-uuid"):
        return str(meta["table-uuid"])
    for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect():
        if r[0] == "Location":
            return "location:" + str(r[1])
    return "name:" + table


_PRUNABLE = ("string", "integer", "long", "short", "byte", "boolean")


def _prune(meta: Optional[Dict[str, Any]], snapshot: int, explicit: bool, schema: Any, files: List[_File]) -> Any:
    """A filter Iceberg pushes into its scan (so that it skips other partitions' files) that every live row of
    ``files`` passes, or None: for each column that is an identity partition source in the specs of all ``files``
    (a top-level column of a simple type), ``col IN (their values)`` (or ``col IS NULL``). In an identity partition
    every row of a file has the file's partition value."""
    if not meta or not files:
        return None
    try:
        if not explicit and meta.get("current-snapshot-id") != snapshot:
            return None  # a commit between reading the snapshot and the metadata file: no pruning
        if explicit:
            schema_id = next(x.get("schema-id") for x in meta.get("snapshots", []) if x["snapshot-id"] == snapshot)
        else:
            schema_id = meta.get("current-schema-id")
        ice_schema = next(x for x in meta.get("schemas", []) if x.get("schema-id") == schema_id)
        col_name = {f["id"]: f["name"] for f in ice_schema["fields"]}
        specs = {int(x["spec-id"]): x for x in meta.get("partition-specs", [])}
        spark_types = {f.name: f.dataType.typeName() for f in schema.fields}
        per_col: Optional[Dict[Any, Any]] = None  # column -> partition field name, in every file's spec
        for spec_id in {f.spec for f in files}:
            here = {}
            for pf in specs[spec_id].get("fields", []):
                c = col_name.get(pf.get("source-id"))
                if pf.get("transform") == "identity" and c in spark_types and spark_types[c] in _PRUNABLE:
                    here[c] = pf["name"]
            per_col = here if per_col is None else {c: n for c, n in per_col.items() if here.get(c) == n}
        cond: Any = None
        for c, n in (per_col or {}).items():
            if any(n not in f.values for f in files):
                continue
            values = {f.values[n] for f in files}
            col = F.col("`" + c.replace("`", "``") + "`")
            known = sorted(v for v in values if v is not None)
            one: Any = col.isin(known) if known else None
            if None in values:
                one = col.isNull() if one is None else (one | col.isNull())
            cond = one if cond is None else (cond & one)
        return cond
    except (StopIteration, KeyError, TypeError, ValueError):
        return None


def is_iceberg_table(spark: SparkSessionLike, table: str) -> bool:
    """Whether ``table`` (a name in a Spark catalog) is an Iceberg table (``DESCRIBE TABLE EXTENDED``: Provider)."""
    try:
        for r in spark.sql(f"DESCRIBE TABLE EXTENDED {table}").collect():
            if r[0] == "Provider":
                return str(r[1]).strip().lower() == "iceberg"
    except Exception:
        return False
    return False


def _frame(spark: Any, table: str, snapshot: int, explicit: bool) -> Tuple[Any, bool]:
    """The rows of ``snapshot`` and whether they are pinned to it. With an explicit snapshot id, as ``SELECT * FROM
    t VERSION AS OF id`` reads them (the snapshot's own schema). For the current snapshot, as ``spark.table(t)``
    reads them (the table's current schema, which a schema change without a new snapshot may have changed): the
    same ``VERSION AS OF`` read when the schemas agree, else ``spark.table(t)`` itself, not pinned (Iceberg 1.11 on
    Spark 4.1 has no reader option that pins a snapshot but keeps the current schema): the caller checks after
    reading that the snapshot is still current."""
    pinned = spark.sql(f"SELECT * FROM {table} VERSION AS OF {int(snapshot)}")
    if explicit:
        return pinned, True
    live = spark.table(table)
    if live.schema == pinned.schema:
        return pinned, True
    return live, False


def _read_states(spark: Any, table: str, snapshot: int, pinned: bool, columns: List[str], paths: List[str],
                 prune: Any = None) -> Dict[str, Optional[bytes]]:
    """One Spark job: the state of each data file of ``paths`` at ``snapshot``, deletes applied (Iceberg's
    ``_file`` metadata column names the data file a live row is read from). A file without live rows has None.
    (Iceberg does not prune its scan by ``_file``; ``prune``, a filter on identity partition columns that all rows
    of those files pass, lets it skip other partitions' files.)"""
    out: Dict[str, Optional[bytes]] = {p: None for p in paths}
    if not paths:
        return out
    clash = [c for c in columns if c.lower() == "_file"]
    if clash:
        raise ValueError(f"dsha.fingerprint_iceberg: {table} has a column named {clash[0]!r}, which the _file "
                         "metadata column dsha's per-file reads group by would clash with: hash it whole with "
                         f"dsha.fingerprint(spark.table({table!r}))")
    cols = [F.col(_q(c)) for c in columns]
    if pinned:
        df = spark.sql(f"SELECT _file, * FROM {table} VERSION AS OF {int(snapshot)}")
    else:
        df = spark.table(table).select("_file", *cols)
    if prune is not None:
        df = df.where(prune)
    rows = (df.where(F.col("_file").isin(list(paths))).groupBy(F.col("_file").alias("f"))
            .agg(dsha_state(*cols).alias("s")).collect())
    if not pinned and _current_snapshot(spark, table) != snapshot:
        raise RuntimeError(f"dsha.fingerprint_iceberg: {table} changed while it was read (a new snapshot): try again")
    for r in rows:
        if r["f"] in out:
            out[r["f"]] = bytes(r["s"])
    return out


# -- the cache -----------------------------------------------------------------------------------------------------

def _load_cache(file: Optional[str], uuid: str, schema: str, warnings: List[str]
                ) -> Tuple[List[Unit[Key]], Optional[int]]:
    _, units, snapshot = load_cache(CACHE, file, uuid, schema, warnings)
    return units, snapshot


def _save_cache(file: str, uuid: str, table: str, schema: str, units: List[Unit[Key]],
                snapshot: Optional[int]) -> None:
    save_cache(CACHE, file, {"table": table, "table_uuid": uuid, "snapshot_id": snapshot}, schema, units)


def _chain(snaps: Dict[int, Tuple[Optional[int], str]], start: int, end: int) -> Optional[List[int]]:
    """The snapshots after ``start`` up to ``end`` along ``end``'s parents, oldest first; None when ``start`` is
    not an ancestor of ``end`` (or the history between them was expired)."""
    out: List[int] = []
    s: Optional[int] = end
    while s is not None and s != start:
        if s not in snaps:
            return None
        out.append(s)
        s = snaps[s][0]
    return list(reversed(out)) if s == start else None


def _groups_from_replaces(spark: Any, table: str, snaps: Dict[int, Tuple[Optional[int], str]], chain: List[int],
                          units: List[Unit]) -> List[Unit]:
    """Groups of the replace snapshots in ``chain``: per partition, the data files a replace added get the merged
    state of those it removed, when the removed ones are exactly covered by known units lying wholly within them."""
    groups = Groups(units)
    for s in chain:
        parent, op = snaps[s]
        if op != "replace" or parent is None:
            continue
        before = {f.key: f for f in _files(spark, table, parent)}
        after = {f.key: f for f in _files(spark, table, s)}
        removed = [f for k, f in before.items() if k not in after]
        added = [f for k, f in after.items() if k not in before]
        if not removed or not added:
            continue
        one_spec = len({f.spec for f in removed + added}) == 1
        parts: Dict[str, Tuple[List[Key], List[Key]]] = {}
        for f in added:
            parts.setdefault(f.part if one_spec else "*", ([], []))[0].append(f.key)
        for f in removed:
            parts.setdefault(f.part if one_spec else "*", ([], []))[1].append(f.key)
        for add, rem in parts.values():
            groups.add(add, rem)
    return groups.new


# -- the API -------------------------------------------------------------------------------------------------------

def _data_snapshot(snaps: Dict[int, Tuple[Optional[int], str]], snap: int) -> int:
    """The newest snapshot at or before ``snap`` (along its parents) that may have changed the rows: ``replace``
    snapshots (compaction, rewrites: "without changing table data", Iceberg's spec) are skipped; a parent that
    is gone (expired) stops the walk."""
    while snaps.get(snap, (None, ""))[1] == "replace":
        parent = snaps[snap][0]
        if parent is None or parent not in snaps:
            break
        snap = parent
    return snap


def _metadata_fingerprint(spark: SparkSessionLike, table: str, snap: Optional[int],
                          df: DataFrameLike) -> PathFingerprint:
    """dsha-meta-v1 of an Iceberg snapshot (SPEC.md §13.2): the table uuid, its read schema, its data snapshot."""
    zero = parse(empty_state(df))  # the canonical schema, from Spark; no file is read for 0 rows
    data = 0 if snap is None else _data_snapshot(_snapshots(spark, table), snap)
    fp = table_meta_fingerprint("iceberg", zero.schema_digest, zero.schema,
                                _table_uuid(spark, table, _metadata(spark, table)), struct.pack("<q", data))
    return PathFingerprint(fingerprint=fp, files_total=0, files_read=0, files_reused=0, manifest=None, warnings=[])


def fingerprint_iceberg(spark: SparkSessionLike, table: str, snapshot_id: Optional[int] = None,
                        state: Optional[str] = None,
                        *, use_cache: bool = True, exact: bool = True) -> PathFingerprint:
    """The fingerprint of an Iceberg table (a name in a Spark catalog, e.g. ``local.db.t``) at its current
    snapshot or ``snapshot_id``, equal to ``dsha.fingerprint(spark.table(table))`` (the current snapshot, read
    with the table's current schema) or ``dsha.fingerprint(spark.sql(f"SELECT * FROM {table} VERSION AS OF {id}"))``
    (an older snapshot, read with its own schema, as Iceberg's time travel does), reading only the data files
    whose states the cache file ``state`` does not have (read first, rewritten after; kept outside the table,
    SPEC.md §15). Without ``state`` (or with ``use_cache=False``) every data file is read, once, in one job.

    ``files_total`` counts the snapshot's data files, ``files_read`` those hashed, ``files_reused`` those whose
    state came from the cache (on their own or in a group of a replace snapshot). Needs a classic session with the
    Iceberg runtime and its SQL extensions loaded.

    ``exact=False``: an approximate fingerprint from the table's metadata alone (``dsha-meta-v1``, SPEC.md §13.2:
    the table uuid, the read schema and the newest snapshot that may have changed rows), which ``replace``
    snapshots (compaction) keep; not a content digest (``rows`` is -1)."""
    jvm_api(spark, "dsha.fingerprint_iceberg")
    warnings: List[str] = []
    snap = int(snapshot_id) if snapshot_id is not None else _current_snapshot(spark, table)
    if not exact:
        df = spark.table(table) if snap is None else _frame(spark, table, snap, snapshot_id is not None)[0]
        return _metadata_fingerprint(spark, table, snap, df)
    if snap is None:  # a table without snapshots: no rows
        df = spark.table(table)
        return PathFingerprint(fingerprint=Fingerprint.from_state(empty_state(df)), files_total=0,
                               files_read=0, files_reused=0, manifest=None, warnings=warn(warnings))
    df_full, pinned = _frame(spark, table, snap, snapshot_id is not None)
    schema = df_full.schema.json()
    meta = _metadata(spark, table)
    uuid = _table_uuid(spark, table, meta) if state and use_cache else ""

    files = _files(spark, table, snap)
    current = {f.key: f for f in files}
    units, cached = _load_cache(state, uuid, schema, warnings) if state and use_cache else ([], None)
    snaps: Dict[int, Tuple[Optional[int], str]] = {}
    back = False  # time travel to an ancestor of the snapshot the cache has processed
    if cached is not None and units and cached != snap:
        snaps = _snapshots(spark, table)
        chain = _chain(snaps, cached, snap)
        if chain:
            units = units + _groups_from_replaces(spark, table, snaps, chain, units)
        else:
            back = _chain(snaps, snap, cached) is not None

    cover = Cover.of(units, current)

    def read(keys: List[Key]) -> Dict[Key, Optional[bytes]]:
        prune = _prune(meta, snap, snapshot_id is not None, df_full.schema, [current[k] for k in keys])
        got = _read_states(spark, table, snap, pinned, df_full.columns, [current[k].path for k in keys], prune)
        return {k: got[current[k].path] for k in keys}

    fresh = cover.read(read)

    if state and use_cache:
        keep = cover.used + fresh
        if back:  # keep the newer snapshot's units too
            seen = {id(u) for u in keep}
            keep += [u for u in units if id(u) not in seen]
        _save_cache(state, uuid, table, schema, keep, cached if back else snap)
    return result(cover, fresh, lambda: empty_state(df_full), len(current), state, warnings)
