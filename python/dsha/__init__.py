"""dsha: logical, order-independent digests of Spark tables.

>>> import dsha
>>> spark = dsha.configure(SparkSession.builder.master("local[*]")).getOrCreate()
>>> dsha.fingerprint(spark.range(10)).digest
'f81b4f5012...'

See the project README and SPEC.md for what the digest means.
"""
from dsha._session import (EXTENSION_CLASS, DshaNotLoadedError, UnsupportedSparkError, configure, ensure_loaded,
                           jar_path, register)
from dsha.delta import fingerprint_delta
from dsha.diff import Diff, DiffError, SchemaDifference, diff
from dsha.iceberg import fingerprint_iceberg
from dsha.files import DshaWarning, PathFingerprint, fingerprint_path, write
from dsha.fingerprint import Comparison, Fingerprint, equal, fingerprint
from dsha.states import StateError, merge, state
from dsha.store import StoreError
from dsha.skip import (Change, Changes, Path, Table, changed, code_version, record, run_if_changed,
                       skip_if_unchanged)


def _version() -> str:
    """The package version, whose one source is build.sbt (``ThisBuild / version``): setup.py puts it into the
    package metadata; from a source tree without metadata, the bundled jars' names carry it."""
    try:
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("dsha")
        except PackageNotFoundError:
            pass
    except ImportError:
        pass
    from dsha._session import bundled_jars, _JAR_NAME
    import os

    versions = {_JAR_NAME.match(os.path.basename(p)).group("version") for p in bundled_jars().values()}
    return versions.pop() if len(versions) == 1 else "0+unknown"


__version__ = _version()
ALGORITHM = "dsha-v1"

__all__ = [
    "ALGORITHM",
    "Change",
    "Changes",
    "Comparison",
    "Diff",
    "DiffError",
    "DshaNotLoadedError",
    "DshaWarning",
    "EXTENSION_CLASS",
    "Fingerprint",
    "PathFingerprint",
    "Path",
    "StateError",
    "SchemaDifference",
    "StoreError",
    "Table",
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
