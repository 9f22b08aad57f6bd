"""What the orchestrator integrations (``dsha.airflow``, ``dsha.dagster``) share: an input's fingerprint and a step's
changes on the engine that fits, where a scheduler's worker may have no Spark.

The engine is ``"spark"``, ``"arrow"`` (``dsha.arrow``: local files of a typed format, no JVM) or ``"auto"``: Arrow
when no Spark session is given and every input is a local file or directory of a typed format with pyarrow
installed, Spark otherwise. Both engines give the same digest of the same files (SPEC.md Appendix A), so records
written by one are compared by the other: a step checked with Arrow and recorded with Spark stays unchanged.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Dict, Optional

from dsha.core.fingerprint import Fingerprint
from dsha.core.paths import format_of, is_glob, local_path
from dsha.core.phases import step
from dsha.dependencies import arrow_installed, install_hint, pyspark_sql
from dsha.errors import UsageError
from dsha.inputs import Input, Path, as_input, fingerprint_input
from dsha.skip import Changes, Inputs, StoreLike, _named, changed
from dsha.spark.session import configure
from dsha.store import InputRecord, Record, open_store

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["ARROW_FORMATS", "ENGINES", "arrow_path_refusal", "changes_on", "engine_for", "fingerprint_on",
           "record_taken", "spark_session"]

ENGINES = ("auto", "arrow", "spark")
# The typed formats, whose column types Spark and Arrow read alike (as the CLI's `--engine auto`).
ARROW_FORMATS = frozenset({"parquet", "orc", "arrow", "ipc", "feather"})


def arrow_path_refusal(x: Input) -> Optional[str]:
    """Why the Arrow engine cannot read ``x``, or None when it can."""
    if not isinstance(x, Path):
        return f"the Arrow engine reads local files, not {getattr(x, 'key', 'a DataFrame')}"
    local = local_path(x.path)
    if local is None or is_glob(local) or not os.path.exists(local):
        return f"the Arrow engine reads an existing local file or directory, not {x.path}"
    fmt = format_of(x.path, x.format, x.force, note=False)
    if fmt not in ARROW_FORMATS:
        return f"the Arrow engine reads {', '.join(sorted(ARROW_FORMATS))}, not {fmt} ({x.path})"
    return None


def engine_for(inputs: Dict[str, Input], engine: str = "auto", spark: Optional[SparkSessionLike] = None) -> str:
    """``"arrow"`` or ``"spark"``: what ``engine`` asks for, checked; for ``"auto"``, see the module."""
    if engine not in ENGINES:
        raise UsageError(f"engine={engine!r}: one of {', '.join(ENGINES)}")
    if engine == "spark":
        return "spark"
    why_not = next((w for w in map(arrow_path_refusal, inputs.values()) if w), None)
    if engine == "arrow":
        if why_not:
            raise UsageError(why_not)
        if not arrow_installed():
            raise UsageError(f'engine="arrow" needs pyarrow and numpy: {install_hint("arrow")}')
        return "arrow"
    return "arrow" if spark is None and why_not is None and arrow_installed() else "spark"


def spark_session(master: Optional[str] = None) -> SparkSessionLike:
    """The running SparkSession with dsha (``master`` ignored then), or a new one on ``master`` (default
    ``local[*]``)."""
    builder = pyspark_sql.SparkSession.builder
    if pyspark_sql.SparkSession.getActiveSession() is None:
        builder = builder.master(master or "local[*]")
    return configure(builder).getOrCreate()


def _store_needs_spark(store: StoreLike) -> bool:
    """A table store, or a directory store on a Hadoop file system: read and written through Spark."""
    where = os.fspath(store) if isinstance(store, (str, os.PathLike)) else None
    return where is not None and (where.startswith("table:") or local_path(where) is None)


def _arrow_record(x: Path) -> InputRecord:
    import dsha.arrow  # needs pyarrow and numpy, which engine_for has found

    fmt = format_of(x.path, x.format, x.force)
    local = local_path(x.path)
    assert local is not None  # engine_for gives the Arrow engine local paths only
    with step(f"digest {x.path}"):
        return InputRecord("path", x.path, fmt, dsha.arrow.fingerprint(local, format=fmt))


def fingerprint_on(x: object, *, engine: str = "auto", spark: Optional[SparkSessionLike] = None,
                   master: Optional[str] = None) -> Fingerprint:
    """The fingerprint of one input (a path, ``dsha.Path``, ``"table:NAME"``, ``dsha.Table``, a DataFrame) on
    ``engine``; Spark is ``spark``, else :func:`spark_session` on ``master``."""
    i = as_input(x)
    if engine_for({"input": i}, engine, spark) == "arrow":
        assert isinstance(i, Path)
        return _arrow_record(i).fingerprint
    return fingerprint_input(spark or spark_session(master), i).fingerprint


def changes_on(inputs: Inputs, *, store: StoreLike, name: str, version: Optional[str] = None, engine: str = "auto",
               spark: Optional[SparkSessionLike] = None, master: Optional[str] = None,
               create_store: bool = False) -> Changes:
    """``dsha.changed`` on ``engine``: what changed in ``inputs`` since step ``name``'s last record in ``store``
    (``"auto"`` takes Spark for a table store or one on a Hadoop file system). The Arrow engine reads every file
    each time (it keeps no per-file states). ``create_store`` as in ``dsha.changed``."""
    named = _named(inputs)
    if engine == "auto" and _store_needs_spark(store):
        engine = "spark"
    if engine_for(named, engine, spark) == "spark":
        return changed(named, store=store, name=name, version=version, spark=spark or spark_session(master),
                       create_store=create_store)
    st = open_store(store, create=create_store)
    with step("read the store's last record"):
        previous = st.latest(name)  # before reading any data: a bad store fails fast
    current = Record(name, {k: _arrow_record(x) for k, x in named.items() if isinstance(x, Path)}, version)
    return Changes(previous, current, st)


def record_taken(record: Record, store: StoreLike, spark: Optional[SparkSessionLike] = None,
                 master: Optional[str] = None) -> Record:
    """Records fingerprints taken earlier (by a check, in another process: ``Record.from_json`` of its
    ``to_json``), stamped now, as ``Changes.record`` does; a table store or one on a Hadoop file system through
    ``spark`` (else :func:`spark_session` on ``master``)."""
    if spark is None and _store_needs_spark(store):
        spark = spark_session(master)
    return Changes(None, record, open_store(store, spark)).record()
