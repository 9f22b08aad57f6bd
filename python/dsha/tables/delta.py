"""Digests of Delta Lake table versions from per-file states keyed by the log's immutable file paths.

``dsha.fingerprint_delta(spark, path, version=None, state=FILE)`` equals
``dsha.fingerprint(spark.read.format("delta").option("versionAsOf", version).load(path))``, computed from the digest
states of the version's files (SPEC.md §11: states of disjoint parts merge into the state of the whole). A Delta
data file never changes once written, so a state is kept under the file's path in the log and its deletion
vector's identity; the cache ``state`` (a JSON file outside the table) keeps them between calls:

* an unchanged table is confirmed from the log alone (its file list; no data is read);
* a commit whose actions all say ``dataChange=false`` (OPTIMIZE, compaction, REORG PURGE) moves rows between files
  without changing them: its added files get, per partition, the merged state of the files it removed (a *group*),
  without being read; a group stays valid while all its files are in the table with the same deletion vectors;
* files new to the cache (appends, the rewrites of UPDATE, MERGE and DELETE without deletion vectors) are read, and
  so are a file whose deletion vector changed and the remaining files of a broken group: one Spark job over just
  those files, with Delta applying deletion vectors, one state per file.
"""
from __future__ import annotations

import hashlib
import json
import struct
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional, Tuple
from urllib.parse import unquote, urlparse

from dsha.core.fingerprint import PathFingerprint
from dsha.core.meta import table_meta_fingerprint
from dsha.core.states import parse
from dsha.dependencies import F, pyspark_sql
from dsha.functions import dsha_state
from dsha.spark.bridge import jvm_api
from dsha.spark.digests import empty_state
from dsha.tables.units import CacheFormat, Cover, Groups, Unit, load_cache, result, save_cache

if TYPE_CHECKING:
    from dsha.spark.types import DataFrameLike, SparkSessionLike

__all__ = ["fingerprint_delta"]

# A file's identity in the log: (path as written in the log, URL-decoded; deletion vector identity or "").
Key = Tuple[str, str]

CACHE = CacheFormat[Key](name="dsha-delta-states", caller="dsha.fingerprint_delta", table_kind="Delta table",
                         id_field="table_id", id_label="id", version_field="log_version",
                         encode=lambda k: list(k), decode=lambda k: (k[0], k[1]))


def _dv_id(dv: Optional[Dict[str, Any]]) -> str:
    """A deletion vector's identity (Delta protocol: storageType, pathOrInlineDv and offset name its bytes)."""
    if not dv:
        return ""
    offset = dv.get("offset")
    return f"{dv.get('storageType')}:{dv.get('pathOrInlineDv')}:{offset if offset is not None else ''}"


def _key(path: str, dv: Optional[Dict[str, Any]]) -> Key:
    return unquote(path), _dv_id(dv)


# -- the small layer that talks to Delta (its internal Scala API, reached through Py4J) ---------------------------

def _invoke(jvm: Any, obj: Any, name: str, *args: Any) -> Any:
    """Calls a Scala method whose trailing parameters have defaults (Options, Booleans, which Py4J cannot omit):
    the overload with the fewest parameters that takes ``args`` first and only Option/boolean after them, filled
    with None/false. Delta's internal signatures gain such parameters from release to release."""
    cls = obj.getClass().getName()
    rest = _SIGNATURES.get((cls, name, len(args)))
    if rest is None:
        candidates = []
        for m in obj.getClass().getMethods():
            if m.getName() != name:
                continue
            types = [t.getName() for t in m.getParameterTypes()]
            if len(types) >= len(args) and all(t in ("scala.Option", "boolean") for t in types[len(args):]):
                candidates.append(tuple(types[len(args):]))
        if not candidates:
            raise RuntimeError(f"dsha.fingerprint_delta: this Delta Lake ({cls}) has no method {name} that dsha "
                               "can call")
        rest = _SIGNATURES[(cls, name, len(args))] = min(candidates, key=len)
    fill = [jvm.scala.Option.empty() if t == "scala.Option" else False for t in rest]
    return getattr(obj, name)(*args, *fill)


_SIGNATURES: Dict[Tuple[str, str, int], Tuple[str, ...]] = {}


def _snapshot(spark: Any, path: str, version: Optional[int]) -> Tuple[Any, Any, int]:
    """(DeltaLog, Snapshot, version) for a table path: the newest version, or ``version``."""
    jvm = spark.sparkContext._jvm
    try:
        log = jvm.org.apache.spark.sql.delta.DeltaLog.forTable(spark._jsparkSession, path)
    except TypeError as e:  # jvm.org.apache... is a package, not the class: Delta is not on the classpath
        raise RuntimeError(
            "dsha.fingerprint_delta needs Delta Lake in the session: spark.jars.packages io.delta:delta-spark_... "
            "and spark.sql.extensions io.delta.sql.DeltaSparkSessionExtension (see dsha/_delta_versions.py)") from e
    snap = _invoke(jvm, log, "update")
    if snap.version() < 0:
        raise ValueError(f"dsha.fingerprint_delta: {path} is not a Delta table")
    if version is not None and int(version) != snap.version():
        snap = _invoke(jvm, log, "getSnapshotAt", int(version))
    return log, snap, int(snap.version())


def _files(spark: Any, snap: Any) -> List[Tuple[Key, str, str]]:
    """The version's files: (key, path as in the log, partition values JSON). Reads the log (checkpoint and
    commits, as Delta's snapshot does), not the data."""
    df = pyspark_sql.DataFrame(snap.allFiles(), spark)
    rows = df.select("path", F.to_json("deletionVector").alias("dv"),
                     F.to_json("partitionValues").alias("pv")).collect()
    return [(_key(r["path"], json.loads(r["dv"]) if r["dv"] else None), r["path"], r["pv"] or "{}") for r in rows]


def _commit_actions(spark: Any, log: Any, version: int) -> Optional[List[Dict[str, Any]]]:
    """The actions of one commit (``_delta_log/<version>.json``), or None if the file is gone (log cleanup) or
    unreadable: then no group is derived from it, and the files it added are read."""
    jvm = spark.sparkContext._jvm
    f = jvm.org.apache.hadoop.fs.Path(log.logPath(), f"{version:020d}.json")
    try:
        fs = f.getFileSystem(spark._jsc.hadoopConfiguration())
        if not fs.exists(f):
            return None
        stream = fs.open(f)
        try:
            text = jvm.org.apache.commons.io.IOUtils.toString(stream, "UTF-8")
        finally:
            stream.close()
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except Exception:
        return None


def _read_states(spark: Any, log: Any, snap: Any, table_uri: str, paths: List[str], df_full: Any,
                 warnings: List[str]) -> Dict[str, Optional[bytes]]:
    """One Spark job: the state of each of ``paths`` (log paths) at this version, deletion vectors applied.
    Reads just those files (a DataFrame over their AddFiles, as Delta's own DML does); a file without rows has
    None."""
    clash = [n for n in df_full.columns if n.lower() == "_metadata"]
    if clash and len(paths):
        raise ValueError(f"dsha.fingerprint_delta: {table_uri} has a column named {clash[0]!r}, which hides the "
                         "_metadata column dsha's per-file reads group by: hash it whole with "
                         "dsha.fingerprint(spark.read.format('delta').load(path))")
    jvm = spark.sparkContext._jvm
    df = None
    try:
        wanted = F.col("path").isin(list(paths))._jc
        adds = snap.allFiles().where(wanted).collectAsList()
        seq = jvm.scala.collection.JavaConverters.asScalaBufferConverter(adds).asScala().toSeq()
        df = pyspark_sql.DataFrame(_invoke(jvm, log, "createDataFrame", snap, seq), spark)
        if df.schema != df_full.schema:
            df = None
    except Exception:
        df = None
    if df is None:
        warnings.append("dsha.fingerprint_delta: this Delta Lake cannot read a chosen set of files "
                        "(DeltaLog.createDataFrame): the whole version was scanned to hash the files to read")
        df = df_full
    by_abs = {_normal(_absolute(table_uri, p)): p for p in paths}
    rows = (df.groupBy(F.col("_metadata.file_path").alias("f")).agg(dsha_state("*").alias("s"))
            .collect() if len(paths) else [])
    out: Dict[str, Optional[bytes]] = {p: None for p in paths}
    for r in rows:
        p = by_abs.get(_normal(r["f"]))
        if p is not None:
            out[p] = bytes(r["s"])
    return out


def _absolute(table_uri: str, log_path: str) -> str:
    u = urlparse(log_path)
    if u.scheme or log_path.startswith("/"):
        return log_path
    return table_uri.rstrip("/") + "/" + log_path


def _normal(uri: str) -> str:
    return unquote(urlparse(uri).path)


# -- the cache -----------------------------------------------------------------------------------------------------

def _files_digest(units: Iterable[Unit[Key]]) -> str:
    """SHA-256 of the units' file keys, sorted (SPEC.md §14): a cache whose units were edited or truncated is not
    taken as the version's file list (its states are still used where they match)."""
    h = hashlib.sha256()
    for path, dv in sorted(k for u in units for k in u.keys):
        for text in (path, dv):
            b = text.encode("utf-8")
            h.update(len(b).to_bytes(4, "little") + b)
    return h.hexdigest()


def _load_cache(file: Optional[str], table_id: str, schema: str, warnings: List[str]
                ) -> Tuple[List[Unit[Key]], Optional[int], bool]:
    """(units of the read schema, the log version the cache has processed, whether those units hold exactly the
    files of that version)."""
    doc, units, log_version = load_cache(CACHE, file, table_id, schema, warnings)
    if doc is None:
        return [], None, False
    listed = doc.get("listed") or {}
    complete = (isinstance(listed, dict) and listed.get("schema") == schema
                and listed.get("files_sha256") == _files_digest(units))
    return units, log_version, complete


def _save_cache(file: str, table_id: str, table_uri: str, schema: str, units: List[Unit[Key]],
                log_version: int, complete: bool) -> None:
    listed = {"schema": schema, "files_sha256": _files_digest(units)} if complete else None
    save_cache(CACHE, file, {"table": table_uri, "table_id": table_id, "log_version": log_version, "listed": listed},
               schema, units)


def _listing_from_commits(spark: Any, log: Any, units: List[Unit], start: int, end: int,
                          commits: Dict[int, List[Dict[str, Any]]]) -> Optional[Dict[Key, Optional[str]]]:
    """The files of version ``end``: the cache's files (those of version ``start``) with the adds and removes of
    the commits in (start, end] applied — what Delta's own log replay gives, without its Spark job. None when a
    commit is gone or unreadable (then Delta's snapshot lists them). Read commits are kept in ``commits``."""
    files: Dict[Key, Optional[str]] = {k: None for u in units for k in u.keys}
    for c in range(start + 1, end + 1):
        actions = _commit_actions(spark, log, c)
        if actions is None:
            return None
        commits[c] = actions
        for a in actions:
            if "remove" in a:
                files.pop(_key(a["remove"]["path"], a["remove"].get("deletionVector")), None)
        for a in actions:
            if "add" in a:
                files[_key(a["add"]["path"], a["add"].get("deletionVector"))] = a["add"]["path"]
    return files


def _groups_from_commits(spark: Any, log: Any, start: int, end: int, units: List[Unit],
                         commits: Optional[Dict[int, List[Dict[str, Any]]]] = None) -> List[Unit]:
    """Groups of the dataChange=false commits in (start, end]: per partition, the added files get the merged
    state of the removed ones, when the removed ones are exactly covered by known units."""
    groups = Groups(units)
    for v in range(start + 1, end + 1):
        actions = (commits or {}).get(v) or _commit_actions(spark, log, v)
        if actions is None:
            continue
        adds = [a["add"] for a in actions if "add" in a]
        removes = [a["remove"] for a in actions if "remove" in a]
        if not adds or not removes or any(x.get("dataChange", True) for x in adds + removes):
            continue
        parts: Dict[str, Tuple[List[Key], List[Key]]] = {}
        for a in adds:
            parts.setdefault(json.dumps(a.get("partitionValues") or {}, sort_keys=True), ([], []))[0].append(
                _key(a["path"], a.get("deletionVector")))
        for r in removes:
            pv = r.get("partitionValues")
            if pv is None:  # a remove without partition values (allowed): group the whole commit as one
                parts = {"*": ([_key(a["path"], a.get("deletionVector")) for a in adds],
                               [_key(x["path"], x.get("deletionVector")) for x in removes])}
                break
            parts.setdefault(json.dumps(pv, sort_keys=True), ([], []))[1].append(_key(r["path"],
                                                                                     r.get("deletionVector")))
        for added, removed in parts.values():
            groups.add(added, removed)
    return groups.new


# -- the API -------------------------------------------------------------------------------------------------------

def _layout_only(actions: List[Dict[str, Any]]) -> bool:
    """A commit that cannot have changed the rows: every add and remove says dataChange=false (OPTIMIZE, compaction,
    REORG PURGE), and no metaData action (schema, partitioning, column mapping) is in it."""
    for a in actions:
        if "metaData" in a:
            return False
        for kind in ("add", "remove"):
            if kind in a and a[kind].get("dataChange", True) is not False:
                return False
    return True


def _data_version(spark: Any, log: Any, v: int) -> int:
    """The newest version <= v whose commit may have changed the rows: the layout-only commits on top of it are
    skipped; a commit that is gone (log cleanup) or unreadable counts as a change."""
    while v > 0:
        actions = _commit_actions(spark, log, v)
        if actions is None or not _layout_only(actions):
            return v
        v -= 1
    return v


def _metadata_fingerprint(spark: SparkSessionLike, log: Any, snap: Any, v: int,
                          df_full: DataFrameLike) -> PathFingerprint:
    """dsha-meta-v1 of a Delta version (SPEC.md §13.1): the table id, its read schema and its data version."""
    zero = parse(empty_state(df_full))  # the canonical schema, from Spark; no file is read for 0 rows
    fp = table_meta_fingerprint("delta", zero.schema_digest, zero.schema, str(snap.metadata().id()),
                                struct.pack("<Q", _data_version(spark, log, v)))
    return PathFingerprint(fingerprint=fp, files_total=0, files_read=0, files_reused=0, manifest=None, warnings=[])


def fingerprint_delta(spark: SparkSessionLike, path: str, version: Optional[int] = None, state: Optional[str] = None,
                      *, use_cache: bool = True, exact: bool = True) -> PathFingerprint:
    """The fingerprint of a Delta table version (the newest, or ``version``), equal to
    ``dsha.fingerprint(spark.read.format("delta").option("versionAsOf", version).load(path))``, reading only the
    files whose states the cache file ``state`` does not have (read first, rewritten after; kept outside the
    table). Without ``state`` (or with ``use_cache=False``) every file is read, once, in one job.

    ``files_read`` counts the files read, ``files_reused`` those whose state came from the cache (on their own or
    in a group of a dataChange=false commit). Needs a classic session with Delta Lake loaded.

    ``exact=False``: an approximate fingerprint from the log alone (``dsha-meta-v1``, SPEC.md §13.1: the table id,
    the read schema and the newest version that may have changed the rows), which OPTIMIZE and other layout-only
    commits keep; not a content digest (``rows`` is -1). It reports a change for every commit that adds or removes
    data, even one that restores earlier content."""
    jvm_api(spark, "dsha.fingerprint_delta")
    warnings: List[str] = []
    log, snap, v = _snapshot(spark, path, version)
    table_uri = log.dataPath().toUri().toString()
    table_id = str(snap.metadata().id())
    reader = spark.read.format("delta")
    if version is not None:
        reader = reader.option("versionAsOf", v)
    df_full = reader.load(path)
    if not exact:
        return _metadata_fingerprint(spark, log, snap, v, df_full)
    schema = df_full.schema.json()

    units, cached_version, complete = (_load_cache(state, table_id, schema, warnings) if use_cache
                                       else ([], None, False))
    commits: Dict[int, List[Dict[str, Any]]] = {}
    current = None  # key -> the path as the log writes it (None: not known yet)
    if complete and units and cached_version is not None and v >= cached_version:
        current = _listing_from_commits(spark, log, units, cached_version, v, commits)
    if current is None:
        current = {k: p for k, p, _ in _files(spark, snap)}
    if cached_version is not None and v > cached_version and units:
        units = units + _groups_from_commits(spark, log, cached_version, v, units, commits)

    cover = Cover.of(units, current)

    def read(keys: List[Key]) -> Dict[Key, Optional[bytes]]:
        if any(current[k] is None for k in keys):  # a cached file to read again: its path as the log has it
            current.update({k: p for k, p, _ in _files(spark, snap) if k in current})
        paths: Dict[Key, str] = {k: current[k] for k in keys}  # type: ignore[misc]  # all known now
        got = _read_states(spark, log, snap, table_uri, list(paths.values()), df_full, warnings)
        return {k: got[paths[k]] for k in keys}

    fresh = cover.read(read)

    if state and use_cache:
        keep = cover.used + fresh
        if cached_version is not None and v < cached_version:  # time travel back: keep the newer entries too
            seen = {id(u) for u in keep}
            keep += [u for u in units if id(u) not in seen]
        # the units hold exactly the files of the version written down, unless older ones were kept beside them
        _save_cache(state, table_id, table_uri, schema, keep, max(v, cached_version or v),
                    complete=cached_version is None or v >= cached_version)
    return result(cover, fresh, lambda: empty_state(df_full), len(current), state, warnings)
