"""Dagster: dsha digests as Dagster data versions, so that Dagster's own staleness follows the data's content.

    orders = dsha.dagster.observable_source("/data/orders", name="orders")    # DataVersion = the files' digest

    @dg.asset
    def report():
        build_report("/data/report")
        return dsha.dagster.written("/data/report")      # the data version of what the asset wrote

    @dg.asset(io_manager_key="io_manager")
    def totals() -> pa.Table:
        return dsha.dagster.output(compute_totals())     # an in-memory value's digest as its data version

    defs = dg.Definitions(assets=[...], resources={"io_manager": dsha.dagster.io_manager(MyIOManager())})

Dagster marks an asset stale when the data version of an input differs from the one its last materialisation
read. With the digest as the version, a rewrite of the same rows (another layout, a compaction, a re-run that
produced identical output) keeps it, so the assets downstream stay fresh; any change of content changes it.
Paths are digested by the Arrow engine (no JVM) when they are local Parquet, ORC or Arrow files, else by Spark
(``engine=``, ``master=``); a Spark DataFrame by Spark, pyarrow, pandas and polars data by the Arrow engine. The
materialisation or observation carries ``dsha/digest``, ``dsha/rows`` and ``dsha/algorithm`` as metadata.
Install with ``pip install "./python[dagster]"`` (or the wheel with ``[dagster]``).
"""
from __future__ import annotations

import os
from typing import Any, Dict, Mapping, Optional

from dsha.core.fingerprint import Fingerprint
from dsha.dependencies import install_hint
from dsha.errors import MissingDependencyError
from dsha.inputs import Path, Table, is_dataframe
from dsha.orchestrators import fingerprint_on

try:
    import dagster as dg
except ImportError as e:
    raise MissingDependencyError(f'dsha.dagster needs Dagster ({e}): {install_hint("dagster")}',
                                 name="dagster") from None

__all__ = ["DshaIOManager", "fingerprint_of", "io_manager", "metadata", "observable_source", "output", "written"]


def fingerprint_of(value: Any, *, engine: str = "auto", master: Optional[str] = None) -> Fingerprint:
    """The fingerprint of a path (``str``, path-like, ``dsha.Path``), ``dsha.Table``/``"table:NAME"``, Spark
    DataFrame (Spark), or in-memory Arrow data: a pyarrow Table or RecordBatch, a pandas or polars DataFrame (the
    Arrow engine)."""
    if isinstance(value, (str, os.PathLike, Path, Table)) or is_dataframe(value):
        return fingerprint_on(value, engine=engine, spark=getattr(value, "sparkSession", None), master=master)
    import dsha.arrow  # in-memory data: the Arrow engine, whatever ``engine`` says (there are no files to read)

    return dsha.arrow.fingerprint(value)


def metadata(fp: Fingerprint) -> Dict[str, Any]:
    """The materialisation or observation metadata of a fingerprint."""
    return {"dsha/digest": fp.digest, "dsha/rows": fp.rows, "dsha/algorithm": fp.algorithm}


def observable_source(data: Any, *, engine: str = "auto", master: Optional[str] = None, **asset: Any
                      ) -> dg.SourceAsset:
    """An observable source asset (``name=``, ``key=``, ``group_name=``, ... as ``dg.observable_source_asset``)
    whose data version is the dsha digest of ``data`` (a path, ``dsha.Path``, ``"table:NAME"``) when observed."""

    @dg.observable_source_asset(**asset)
    def observe() -> dg.ObserveResult:
        fp = fingerprint_of(data, engine=engine, master=master)
        return dg.ObserveResult(data_version=dg.DataVersion(fp.digest), metadata=metadata(fp))

    return observe


def written(data: Any, *, engine: str = "auto", master: Optional[str] = None,
            extra: Optional[Mapping[str, Any]] = None) -> dg.MaterializeResult:
    """The result of an asset that wrote its data itself: its data version is the digest of ``data`` (what was
    written: a path, ``dsha.Path``, ``"table:NAME"``), read after the write; ``extra`` metadata besides dsha's."""
    fp = fingerprint_of(data, engine=engine, master=master)
    return dg.MaterializeResult(data_version=dg.DataVersion(fp.digest), metadata={**metadata(fp), **(extra or {})})


def output(value: Any, *, engine: str = "auto", master: Optional[str] = None, **kwargs: Any) -> dg.Output:
    """``dg.Output(value)`` (for the IO manager to write) whose data version is the digest of ``value``."""
    fp = fingerprint_of(value, engine=engine, master=master)
    return dg.Output(value, data_version=dg.DataVersion(fp.digest),
                     metadata={**metadata(fp), **kwargs.pop("metadata", {})}, **kwargs)


class DshaIOManager(dg.IOManager):
    """An IO manager that hands every output to ``inner`` to write and load, and records the digest of what it
    wrote as the materialisation's metadata (``dsha/digest``, ``dsha/rows``, ``dsha/algorithm``). Outputs that are
    ``dsha.dagster.output(...)`` already carry it (and their data version): they are not digested twice."""

    def __init__(self, inner: dg.IOManager, engine: str = "auto") -> None:
        self.inner, self.engine = inner, engine

    def handle_output(self, context: dg.OutputContext, obj: Any) -> None:
        self.inner.handle_output(context, obj)
        if obj is None or "dsha/digest" in (context.output_metadata or {}):
            return
        context.add_output_metadata(metadata(fingerprint_of(obj, engine=self.engine)))

    def load_input(self, context: dg.InputContext) -> Any:
        return self.inner.load_input(context)


def io_manager(inner: dg.IOManager, engine: str = "auto") -> dg.IOManagerDefinition:
    """``DshaIOManager(inner)`` as a resource: ``resources={"io_manager": dsha.dagster.io_manager(inner)}``."""
    return dg.IOManagerDefinition.hardcoded_io_manager(DshaIOManager(inner, engine))
