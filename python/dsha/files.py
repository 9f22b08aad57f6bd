"""Digests of files: computed while writing (``dsha.write``) and re-computed from a manifest (``dsha.fingerprint_path``).

``dsha.write`` writes a DataFrame like ``df.write`` and digests it in the same pass, exactly under task retries,
speculation and lost executors (only the files the job commits count), then keeps each file's digest state beside
the data in ``_dsha/manifest.json`` (SPEC.md §12). ``dsha.fingerprint_path`` re-digests a directory reading only the
files that are new or changed since a manifest; it writes nothing unless asked.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union

from dsha._session import _is_connect, ensure_loaded
from dsha.fingerprint import Fingerprint


class DshaWarning(UserWarning):
    """Something a user should know about a result that is still exact (e.g. an untrusted manifest was ignored)."""


@dataclass(frozen=True)
class PathFingerprint:
    """The fingerprint of the files at a path, with how it was computed: how many files were read and how many
    states were reused from a manifest (``manifest``: where from, or None), and any warnings."""

    fingerprint: Fingerprint
    files_total: int
    files_read: int
    files_reused: int
    manifest: Optional[str]
    warnings: List[str] = field(default_factory=list)

    @property
    def digest(self) -> str:
        return self.fingerprint.digest

    @property
    def rows(self) -> int:
        return self.fingerprint.rows

    def __str__(self) -> str:
        return self.fingerprint.digest


def _jvm_api(spark: Any, what: str) -> Any:
    if _is_connect(spark):
        raise NotImplementedError(
            f"{what} needs a classic SparkSession: it runs dsha's file writer and listing in the driver JVM, which a "
            "Spark Connect client cannot reach. Use a classic session (SparkSession.builder.master(...)), or "
            "dsha.fingerprint(spark.read.load(path)) for a full digest.")
    ensure_loaded(spark)
    return spark.sparkContext._jvm.io.dsha.files.PythonApi


def _java_errors(call):
    """Runs a JVM call; dsha's IllegalArgumentException (a bad argument, named) becomes a ValueError. PySpark may
    already have converted it (``pyspark.errors.IllegalArgumentException``), or Py4J hands it over raw."""
    from py4j.protocol import Py4JJavaError

    try:
        return call()
    except Py4JJavaError as e:
        java = e.java_exception
        if java.getClass().getName() == "java.lang.IllegalArgumentException":
            _raise_if_ours(java.getMessage() or "")
        raise
    except Exception as e:
        if type(e).__name__ == "IllegalArgumentException":
            _raise_if_ours(str(e).split("\n", 1)[0])
        raise


def _raise_if_ours(message: str) -> None:
    if message.startswith("dsha"):
        raise ValueError(message) from None


def _options(spark: Any, options: Dict[str, Any]) -> Any:
    m = spark.sparkContext._jvm.java.util.HashMap()
    for k, v in options.items():
        m.put(str(k), str(v).lower() if isinstance(v, bool) else str(v))
    return m


def _warn(messages: Sequence[str]) -> List[str]:
    out = [str(m) for m in messages]
    for m in out:
        warnings.warn(m, DshaWarning, stacklevel=3)
    return out


def _algorithm(spark: Any, algorithm: Optional[str], key: Any) -> tuple:
    """(algorithm id, key argument or None) for per-file states, as ``dsha.fingerprint`` takes them. The key goes to
    the JVM as a ``conf:NAME`` reference (``functions.key_reference``), which Spark removes as it reads it."""
    from dsha.fingerprint import algorithm_id

    resolved = algorithm_id(algorithm, key)
    if key is None:
        return resolved, None
    from dsha.functions import key_reference

    return resolved, key_reference(spark, key)


def write(df: Any, path: str, format: str = "parquet", mode: str = "errorifexists",
          partition_by: Union[str, Sequence[str], None] = None, *, algorithm: Optional[str] = None,
          key: Any = None, **options: Any) -> Optional[Fingerprint]:
    """Writes ``df`` to ``path`` like ``df.write.format(format).mode(mode).partitionBy(*partition_by)
    .options(**options).save(path)`` and returns the :class:`Fingerprint` of the rows written, computed while
    writing (the data is read once). For Parquet and ORC, the files' digest states go into
    ``path/_dsha/manifest.json`` after the job commits, so that :func:`fingerprint_path` can re-digest the
    directory later without reading unchanged files (with ``mode="append"``, the manifest keeps the states of the
    files already there).

    The fingerprint equals ``dsha.fingerprint(spark.read.schema(df.schema).format(format).load(path))`` (for an
    append: of the rows appended). Read back without a schema, partition columns may come back with other types
    (Spark infers them from directory names), and so with another digest.

    ``mode="overwrite"`` replaces the whole directory (``partitionOverwriteMode=dynamic`` is refused);
    ``mode="ignore"`` over an existing path writes nothing and returns None.

    ``algorithm="secure"`` or ``key=``: the tamper-evident dsha-secure-v1 or dsha-keyed-v1 (SPEC.md §16) instead of
    dsha-v1, for the fingerprint and the manifest's states (which then re-digest with the same algorithm; a keyed
    manifest records which key, by its ``key_id``, and is not used under another).
    """
    spark = df.sparkSession
    algorithm_id, key_argument = _algorithm(spark, algorithm, key)
    api = _jvm_api(spark, "dsha.write")
    columns = [partition_by] if isinstance(partition_by, str) else list(partition_by or [])
    jvm = spark.sparkContext._jvm
    cols = jvm.java.util.ArrayList()
    for c in columns:
        cols.add(c)
    result = _java_errors(lambda: api.write(df._jdf, path, format, mode, cols, _options(spark, options), algorithm_id,
                                            key_argument))
    _warn(result.warningsArray())
    if result.ignored():
        return None
    return Fingerprint.from_state(bytes(result.stateBytes()))


def fingerprint_path(spark: Any, path: str, format: str = "parquet", schema: Any = None, *,
                     state: Optional[str] = None, update_manifest: bool = False, use_cache: bool = True,
                     algorithm: Optional[str] = None, key: Any = None, **options: Any) -> PathFingerprint:
    """The fingerprint of ``spark.read.format(format).options(**options).load(path)`` (with ``schema`` if given:
    a ``StructType`` or a DDL string), reading only what changed since a manifest.

    A manifest is ``path/_dsha/manifest.json`` (written by :func:`write`, or by ``update_manifest=True``) or the
    file ``state`` (a cache kept outside the data; read first, and rewritten after). A file whose path, size and
    modification time match its entry is not read; new and changed files are read and hashed one state per file,
    in one job; removed files are dropped. A manifest that disagrees with the files (edited, truncated, for another
    schema, format or algorithm) is ignored with a :class:`DshaWarning`. ``use_cache=False`` reads every file.

    Nothing is written unless asked: ``update_manifest=True`` writes the manifest beside the data, ``state`` the
    cache file.

    ``algorithm="secure"`` or ``key=``: dsha-secure-v1 or dsha-keyed-v1 (SPEC.md §16) throughout; a manifest of
    another algorithm (or key) is not used.

    ``format="delta"`` is :func:`dsha.fingerprint_delta` (states keyed by the Delta log's file paths, ``state``
    the cache file; ``versionAsOf`` selects a version); it takes no schema, other options or ``update_manifest``.
    """
    if format == "delta":
        from dsha.delta import fingerprint_delta

        if algorithm is not None or key is not None:
            raise ValueError("dsha.fingerprint_path: Delta tables are digested with dsha-v1 (use "
                             "dsha.fingerprint(spark.read.format('delta').load(path), algorithm='secure'))")
        version = options.pop("versionAsOf", options.pop("versionasof", None))
        if schema is not None or options or update_manifest:
            raise ValueError("dsha.fingerprint_path: format='delta' takes no schema, no options but versionAsOf, "
                             "and no update_manifest (dsha writes nothing inside a Delta table; use state=FILE)")
        return fingerprint_delta(spark, path, version=None if version is None else int(version), state=state,
                                 use_cache=use_cache)
    api = _jvm_api(spark, "dsha.fingerprint_path")
    algorithm_id, key_argument = _algorithm(spark, algorithm, key)
    schema_json = None
    if schema is not None:
        from pyspark.sql.types import StructType, _parse_datatype_string

        st = schema if isinstance(schema, StructType) else _parse_datatype_string(schema)
        schema_json = st.json()
    r = _java_errors(lambda: api.fingerprintPath(spark._jsparkSession, path, format, schema_json,
                                                 _options(spark, options), state, update_manifest, use_cache,
                                                 algorithm_id, key_argument))
    return PathFingerprint(fingerprint=Fingerprint.from_state(bytes(r.stateBytes())), files_total=r.filesTotal(),
                           files_read=r.filesRead(), files_reused=r.filesReused(), manifest=r.manifestOrNull(),
                           warnings=_warn(r.warningsArray()))
