"""dsha: logical, order-independent digests of Spark tables.

>>> import dsha
>>> spark = dsha.configure(SparkSession.builder.master("local[*]")).getOrCreate()
>>> dsha.fingerprint(spark.range(10)).digest
'f81b4f5012...'

See the project README and SPEC.md for what the digest means. ``import dsha`` imports neither pyspark nor the
command line: the Spark modules import pyspark when they are called (``dsha.dependencies``).
"""
from __future__ import annotations

import importlib.metadata
import os

from dsha import functions as functions  # the module: dsha.functions.dsha_keyed(...)
from dsha.core.algorithms import DEFAULT as ALGORITHM
from dsha.core.code_version import code_version
from dsha.core.fingerprint import Comparison, Fingerprint, PathFingerprint
from dsha.core.states import merge
from dsha.digests import equal, fingerprint, state
from dsha.errors import (
    DiffError,
    DshaNotLoadedError,
    DshaWarning,
    StateError,
    StoreError,
    TableNotFoundError,
    UnsupportedSparkError,
)
from dsha.inputs import Path, Table, fingerprint_path
from dsha.jarfree.diff import diff
from dsha.skip import Change, Changes, changed, record, run_if_changed, skip_if_unchanged
from dsha.spark.diff import Diff, SchemaDifference
from dsha.spark.files import write
from dsha.spark.session import EXTENSION_CLASS, JAR_NAME, bundled_jars, configure, ensure_loaded, jar_path, register
from dsha.tables.delta import fingerprint_delta
from dsha.tables.iceberg import fingerprint_iceberg


def _version() -> str:
    """The package version, whose one source is build.sbt (``ThisBuild / version``): setup.py puts it into the
    package metadata; from a source tree without metadata, the bundled jars' names carry it."""
    try:
        return importlib.metadata.version("dsha")
    except importlib.metadata.PackageNotFoundError:
        pass
    versions = set()
    for p in bundled_jars().values():
        m = JAR_NAME.match(os.path.basename(p))
        if m:
            versions.add(m.group("version"))
    return versions.pop() if len(versions) == 1 else "0+unknown"


__version__ = _version()

__all__ = [
    "ALGORITHM",
    "EXTENSION_CLASS",
    "Change",
    "Changes",
    "Comparison",
    "Diff",
    "DiffError",
    "DshaNotLoadedError",
    "DshaWarning",
    "Fingerprint",
    "Path",
    "PathFingerprint",
    "SchemaDifference",
    "StateError",
    "StoreError",
    "Table",
    "TableNotFoundError",
    "UnsupportedSparkError",
    "changed",
    "code_version",
    "configure",
    "diff",
    "ensure_loaded",
    "equal",
    "fingerprint",
    "fingerprint_delta",
    "fingerprint_iceberg",
    "fingerprint_path",
    "jar_path",
    "merge",
    "record",
    "register",
    "run_if_changed",
    "skip_if_unchanged",
    "state",
    "write",
]
