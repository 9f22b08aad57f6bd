"""Inputs, and how each is fingerprinted: the one dispatcher of ``dsha hash`` and of skip-if-unchanged (``dsha check``,
``dsha.changed``), and of ``dsha.fingerprint_path``.

An input is a DataFrame, a catalog table (:class:`Table`, or the string ``"table:NAME"``) or files at a path
(:class:`Path`: a local or Hadoop path, or a glob; its format given or inferred). :func:`fingerprint_input` decides
how: a DataFrame, a column subset, a keyed or secure digest, a glob without a state cache, a Delta table without
one, and anything over Spark Connect are read in full (one job); an Iceberg table from its snapshots' per-file
states (SPEC.md §15), a Delta table with a state cache from its log (§14), other files from per-file states in a
manifest or cache (§12); ``exact=False`` from metadata only (§13).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import PurePath
from typing import TYPE_CHECKING, Any, List, Optional, Sequence, Union

from dsha.core.fingerprint import Fingerprint, PathFingerprint
from dsha.core.names import did_you_mean
from dsha.core.paths import check_local, format_of, has_glob_characters, is_glob, reader_options, spark_path
from dsha.core.phases import step
from dsha.digests import fingerprint
from dsha.errors import UsageError
from dsha.spark.catalog_names import table_not_found
from dsha.spark.files import fingerprint_files
from dsha.spark.keys import Key
from dsha.spark.session import is_connect
from dsha.tables.delta import fingerprint_delta
from dsha.tables.iceberg import fingerprint_iceberg, is_iceberg_table

if TYPE_CHECKING:
    from pyspark.sql.types import StructType

    from dsha.spark.types import DataFrameLike, SparkSessionLike

__all__ = ["Fingerprinted", "Input", "Path", "State", "Table", "as_input", "fingerprint_input", "fingerprint_path",
           "is_dataframe", "is_iceberg", "load", "resolve_columns"]


@dataclass(frozen=True)
class Table:
    """A catalog table as an input (``spark.table(name)``); named ``"table:<name>"`` in a list of inputs."""

    name: str

    @property
    def key(self) -> str:
        return "table:" + self.name


@dataclass(frozen=True)
class Path:
    """Files as an input: a path (any Hadoop path, a glob) and its format (default: inferred as ``dsha hash``
    does, from the path or every data file in it, else parquet; a mixed directory is a :class:`UsageError`). A
    local file or directory that exists is read as that path even when its name holds glob characters
    (``x[1].parquet``); other paths with ``*``, ``?``, ``[`` or ``{`` are Hadoop globs.
    ``force=True`` reads a Delta or Iceberg table's directory in the given format, every file (removed ones too);
    without it that is a :class:`UsageError`."""

    path: str
    format: Optional[str] = None
    force: bool = False

    @property
    def key(self) -> str:
        return self.path


Input = Union["DataFrameLike", Table, Path]
# A state cache file: a str as the caller wrote it (for files, a Hadoop path), or a pathlib path (a local file).
State = Union[str, PurePath, None]


def is_dataframe(x: object) -> bool:
    return hasattr(x, "sparkSession") and hasattr(x, "agg")  # classic and Spark Connect DataFrames alike


def as_input(x: object) -> Input:
    """``x`` as an input: a DataFrame, :class:`Table` or :class:`Path` as it is; a str or path-like is a
    :class:`Path`, or a :class:`Table` when it reads ``"table:NAME"``."""
    if isinstance(x, (Table, Path)):
        return x
    if is_dataframe(x):
        return x  # type: ignore[return-value]
    if isinstance(x, (str, os.PathLike)):
        s = os.fspath(x)
        return Table(s[len("table:"):]) if s.startswith("table:") else Path(s)
    raise TypeError(f"not a dsha input: {x!r} (a DataFrame, a path, dsha.Path, dsha.Table or \"table:NAME\")")


@dataclass(frozen=True)
class Fingerprinted:
    """An input's fingerprint and how it was taken: ``kind`` "dataframe", "table" or "path"; ``source`` the table
    name or path (None for a DataFrame); ``format`` of a path; ``files`` the per-file account when per-file states
    were used (files read and reused, the manifest or cache)."""

    kind: str
    source: Optional[str]
    format: Optional[str]
    fingerprint: Fingerprint
    files: Optional[PathFingerprint] = None


def _need(spark: Optional[SparkSessionLike], what: str) -> SparkSessionLike:
    if spark is None:
        raise ValueError(f"no active SparkSession to read {what}: pass spark=")
    return spark


def resolve_columns(available: Sequence[str], wanted: Sequence[str], where: str) -> List[str]:
    """``wanted`` as the input names them, matched case-insensitively as Spark resolves names by default; a
    :class:`UsageError` names the missing ones."""
    by_lower = {c.lower(): c for c in available}
    names = [c if c in available else by_lower.get(c.lower()) for c in wanted]
    missing = [w for w, n in zip(wanted, names) if n is None]
    if missing:
        raise UsageError(f"no column {', '.join(missing)} in {where}{did_you_mean(missing, available)} "
                         f"(columns: {', '.join(available)})")
    return [n for n in names if n is not None]


def load(spark: Optional[SparkSessionLike], x: Union[Table, Path], columns: Optional[Sequence[str]] = None
         ) -> DataFrameLike:
    """The DataFrame of a table or of files (read with the format's reader options), with ``columns`` only."""
    if isinstance(x, Table):
        session = _need(spark, x.key)
        try:
            df = session.table(x.name)
            if is_connect(session):
                df.schema  # noqa: B018 - Spark Connect reads the catalog only now: a missing table fails here
        except Exception as e:
            missing = table_not_found(session, e, x.name)
            if missing is None:
                raise
            raise missing from e
    else:
        check_local(x.path)
        fmt = format_of(x.path, x.format, x.force)
        df = _need(spark, x.path).read.format(fmt).options(**reader_options(fmt, x.path)).load(spark_path(x.path, fmt))
    if columns:
        names = resolve_columns(df.columns, columns, x.key)
        df = df.select(*("`" + c.replace("`", "``") + "`" for c in names))
    return df


def is_iceberg(spark: Optional[SparkSessionLike], x: object) -> bool:
    """Whether ``x`` is a table that Iceberg's per-file states can digest (a classic session's Iceberg table)."""
    return (isinstance(x, Table) and spark is not None and not is_connect(spark)
            and is_iceberg_table(spark, x.name))


def _local_state(state: State) -> Optional[str]:
    return None if state is None else os.fspath(state)


def _hadoop_state(state: State) -> Optional[str]:
    return state.as_uri() if isinstance(state, PurePath) else state


def fingerprint_input(spark: Optional[SparkSessionLike], x: Input, *, columns: Optional[Sequence[str]] = None,
                      exact: bool = True, algorithm: Optional[str] = None, key: Optional[Key] = None,
                      state: State = None, update_manifest: bool = False, use_cache: bool = True,
                      exclude: Optional[Sequence[str]] = None) -> Fingerprinted:
    """The fingerprint of an input, taken the cheapest way that gives the same digest (see the module's text).

    ``state``: the per-file state cache (read, then rewritten) of files, a Delta or an Iceberg table;
    ``update_manifest``: write the manifest beside plain files; ``use_cache=False``: read every file; ``exclude``:
    columns left out (as ``dsha.fingerprint(df, exclude=...)``: every row read)."""
    if is_dataframe(x):
        df: Any = x
        if columns:
            df = df.select(*columns)
        return Fingerprinted("dataframe", None, None, fingerprint(df, exact=exact, algorithm=algorithm, key=key,
                                                                  exclude=exclude))
    assert isinstance(x, (Table, Path))
    whole = not columns and not exclude and algorithm is None and key is None  # what per-file states can digest
    if isinstance(x, Table):
        if whole and is_iceberg(spark, x):
            with step(f"digest {x.name} file by file"):
                r = fingerprint_iceberg(_need(spark, x.key), x.name, exact=exact, state=_local_state(state),
                                        use_cache=use_cache)
            return Fingerprinted("table", x.name, None, r.fingerprint, r if exact else None)
        with step(f"plan {x.name}"):
            df = load(spark, x, columns)
        with step(f"digest {x.name}"):
            fp = fingerprint(df, exact=exact, algorithm=algorithm, key=key, exclude=exclude)
        return Fingerprinted("table", x.name, None, fp)
    check_local(x.path)
    fmt = format_of(x.path, x.format, x.force)
    session = _need(spark, x.path)
    if whole and fmt == "delta" and not exact:  # from the log: layout-only commits (OPTIMIZE) keep it
        return Fingerprinted("path", x.path, fmt, fingerprint_delta(session, x.path, exact=False).fingerprint)
    # dsha's per-file route reads the path as Spark's reader does (a glob), so a path that is not a pattern but
    # holds glob characters is read in full, escaped (load).
    literal = fmt != "delta" and not is_glob(x.path) and has_glob_characters(x.path)
    per_file = (whole and exact and (not is_connect(session) or update_manifest) and not literal
                and (state is not None or (fmt != "delta" and not is_glob(x.path))))
    if not per_file:
        with step(f"plan {x.path}"):  # the reader lists the files and reads the schema
            df = load(session, Path(x.path, fmt, x.force), columns)
        with step(f"digest {x.path}"):
            fp = fingerprint(df, exact=exact, algorithm=algorithm, key=key, exclude=exclude)
        return Fingerprinted("path", x.path, fmt, fp)
    with step(f"digest {x.path} file by file"):  # the files changed since the states were taken are read
        if fmt == "delta":
            r = fingerprint_delta(session, x.path, state=_local_state(state), use_cache=use_cache)
        else:
            r = fingerprint_files(session, x.path, fmt, state=_hadoop_state(state), update_manifest=update_manifest,
                                  use_cache=use_cache, **reader_options(fmt, x.path))
    return Fingerprinted("path", x.path, fmt, r.fingerprint, r)


def fingerprint_path(spark: SparkSessionLike, path: str, format: str = "parquet",
                     schema: Union[StructType, str, None] = None, *, state: Optional[str] = None,
                     update_manifest: bool = False, use_cache: bool = True, algorithm: Optional[str] = None,
                     key: Optional[Key] = None, **options: Any) -> PathFingerprint:
    """The fingerprint of ``spark.read.format(format).options(**options).load(path)`` (with ``schema`` if given:
    a ``StructType`` or a DDL string), reading only what changed since a manifest.

    A manifest is ``path/_dsha/manifest.json`` (written by :func:`dsha.write`, or by ``update_manifest=True``) or the
    file ``state`` (a cache kept outside the data; read first, and rewritten after). A file whose path, size and
    modification time match its entry is not read; new and changed files are read and hashed one state per file,
    in one job; removed files are dropped. A manifest that is damaged, carelessly edited (its checksum does not
    match), or for another schema, format, algorithm or key is ignored with a :class:`DshaWarning`.
    ``use_cache=False`` reads every file.

    A manifest is a cache, never a trust anchor (SPEC.md §12.3): a dsha-v1 result from it is the files' digest
    provided the manifest and each file's size and modification time can be trusted (the checksum needs no secret:
    deliberate edits pass it). With ``key=``, a manifest is used only if its MAC verifies under the key (only a key
    holder writes one); ``algorithm="secure"`` reads every file, since anyone can write public states.

    Nothing is written unless asked: ``update_manifest=True`` writes the manifest beside the data, ``state`` the
    cache file.

    ``algorithm="secure"`` or ``key=``: dsha-secure-v1 or dsha-keyed-v1 (SPEC.md §16) throughout; a manifest of
    another algorithm (or key), or a keyed one whose MAC does not verify, is not used.

    ``format="delta"`` is :func:`dsha.fingerprint_delta` (states keyed by the Delta log's file paths, ``state``
    the cache file; ``versionAsOf`` selects a version); it takes no schema, other options or ``update_manifest``.
    """
    if format != "delta":
        return fingerprint_files(spark, path, format, schema, state=state, update_manifest=update_manifest,
                                 use_cache=use_cache, algorithm=algorithm, key=key, **options)
    if algorithm is not None or key is not None:
        raise ValueError("dsha.fingerprint_path: Delta tables are digested with dsha-v1 (use "
                         "dsha.fingerprint(spark.read.format('delta').load(path), algorithm='secure'))")
    version = options.pop("versionAsOf", options.pop("versionasof", None))
    if schema is not None or options or update_manifest:
        raise ValueError("dsha.fingerprint_path: format='delta' takes no schema, no options but versionAsOf, "
                         "and no update_manifest (dsha writes nothing inside a Delta table; use state=FILE)")
    return fingerprint_delta(spark, path, version=None if version is None else int(version), state=state,
                             use_cache=use_cache)
