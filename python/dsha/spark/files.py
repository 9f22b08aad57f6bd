"""Digests of files: computed while writing (``dsha.write``) and re-computed from a manifest
(``dsha.fingerprint_path``).

``dsha.write`` writes a DataFrame like ``df.write`` and digests it in the same pass, exactly under task retries,
speculation and lost executors (only the files the job commits count), then keeps each file's digest state beside
the data in ``_dsha/manifest.json`` (SPEC.md §12). ``dsha.fingerprint_path`` re-digests a directory reading only the
files that are new or changed since a manifest; it writes nothing unless asked.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union, cast
from urllib.parse import unquote, urlparse

from dsha.core.algorithms import algorithm_id
from dsha.core.fingerprint import Fingerprint, PathFingerprint
from dsha.core.lineage import emit_written
from dsha.core.paths import has_glob_characters
from dsha.dependencies import pyspark_types
from dsha.errors import warn
from dsha.spark.bridge import java_errors, java_map, jvm_api
from dsha.spark.keys import Key, key_reference

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from dsha.spark.types import DataFrameLike, SparkSessionLike

__all__ = ["fingerprint_files", "write"]


def _algorithm(spark: SparkSessionLike, algorithm: Optional[str], key: Optional[Key]) -> Tuple[str, Optional[str]]:
    """(algorithm id, key argument or None) for per-file states, as ``dsha.fingerprint`` takes them. The key goes to
    the JVM for this session (``keys.key_reference``), named by a ``conf:NAME`` reference."""
    resolved = algorithm_id(algorithm, key)
    if key is None:
        return resolved, None
    return resolved, key_reference(spark, key)


def write(df: DataFrameLike, path: str, format: str = "parquet", mode: str = "errorifexists",
          partition_by: Union[str, Sequence[str], None] = None, *, algorithm: Optional[str] = None,
          key: Optional[Key] = None, **options: Any) -> Optional[Fingerprint]:
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
    dsha-v1, for the fingerprint and the manifest's states (a keyed manifest records which key, by its ``key_id``,
    and carries a MAC under it: it is used only under that key, and only while the MAC verifies; dsha-secure-v1
    re-digests read every file, as anyone can write public states: SPEC.md §12.3).

    With an OpenLineage client configured (``OPENLINEAGE_URL``, ``OPENLINEAGE__TRANSPORT__*``, ``openlineage.yml``),
    emits a COMPLETE event of job ``dsha.write`` whose output is ``path`` with the ``dsha`` facet of the returned
    fingerprint (``dsha.core.lineage``); an emission that fails is a warning, never an error.
    """
    spark = df.sparkSession
    algorithm_id, key_argument = _algorithm(spark, algorithm, key)
    api = jvm_api(spark, "dsha.write")
    columns = [partition_by] if isinstance(partition_by, str) else list(partition_by or [])
    jvm: Any = spark.sparkContext._jvm
    cols = jvm.java.util.ArrayList()
    for c in columns:
        cols.add(c)
    result = java_errors(lambda: api.write(df._jdf, path, format, mode, cols,
                                           java_map(spark, options), algorithm_id, key_argument))
    warn(result.warningsArray())
    if result.ignored():
        return None
    written = Fingerprint.from_state(bytes(result.stateBytes()))
    emit_written(written, path)  # with an OpenLineage client configured: the output and its dsha facet
    return written


def fingerprint_files(spark: SparkSessionLike, path: str, format: str = "parquet",
                      schema: Union[StructType, str, None] = None, *, state: Optional[str] = None,
                      update_manifest: bool = False, use_cache: bool = True, algorithm: Optional[str] = None,
                      key: Optional[Key] = None, **options: Any) -> PathFingerprint:
    """``dsha.fingerprint_path`` of files (any format but Delta, which has its own log: ``dsha.tables.delta``): the
    fingerprint of ``spark.read.format(format).options(**options).load(path)`` (with ``schema`` if given: a
    ``StructType`` or a DDL string), reading only what changed since a manifest (``_dsha/manifest.json`` or the file
    ``state``), one state per file, in one job (SPEC.md §12)."""
    api = jvm_api(spark, "dsha.fingerprint_path")
    algorithm_id, key_argument = _algorithm(spark, algorithm, key)
    st: Optional[StructType] = None
    if schema is not None:
        st = schema if isinstance(schema, pyspark_types.StructType) else cast(
            "StructType", pyspark_types._parse_datatype_string(schema))
    notes: List[str] = []
    if use_cache:
        named = _file_named_like_a_glob(spark, path, format, st, options)
        if named is not None:
            use_cache = False
            notes.append(f"dsha.fingerprint_path read every file of {path}: {named} is named with a Hadoop glob "
                         "character ({}[]*?\\), and a re-read of changed files by name could read other files")
    r = java_errors(lambda: api.fingerprintPath(spark._jsparkSession, path, format,
                                                None if st is None else st.json(), java_map(spark, options), state,
                                                update_manifest, use_cache, algorithm_id, key_argument))
    return PathFingerprint(fingerprint=Fingerprint.from_state(bytes(r.stateBytes())), files_total=r.filesTotal(),
                           files_read=r.filesRead(), files_reused=r.filesReused(), manifest=r.manifestOrNull(),
                           warnings=warn([*notes, *r.warningsArray()]))


def _file_named_like_a_glob(spark: SparkSessionLike, path: str, format: str, schema: Optional[StructType],
                            options: Dict[str, Any]) -> Optional[str]:
    """The first file of the read (Spark's listing) whose path holds a Hadoop glob character, or None. The JVM side
    re-reads changed files by passing their paths to Spark's reader, which expands such a path as a pattern (a
    changed ``x[1].parquet`` would be hashed as ``x1.parquet`` and that state kept for it): with such a file, every
    file is read in one scan and each state attributed by the file Spark read its rows from."""
    reader = spark.read.format(format).options(**options)
    if schema is not None:
        reader = reader.schema(schema)
    for uri in reader.load(path).inputFiles():
        name = unquote(urlparse(uri).path)
        if has_glob_characters(name):
            return name
    return None
