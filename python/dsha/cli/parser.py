"""The command line's parser: options every command takes, and one sub-parser per command (each command's module
adds its own)."""
from __future__ import annotations

import argparse
import importlib
import importlib.metadata
import os
from typing import Any, Optional, Sequence, Union

from dsha import ALGORITHM, __version__
from dsha.cli import compare, diff, diff_arrow, hash, store
from dsha.cli.engine import arrow_installed
from dsha.dependencies import install_hint, installed
from dsha.spark.session import jar_path, spark_runtime

__all__ = ["parser", "version_text"]


def version_text() -> str:
    """What ``dsha --version`` prints: dsha's version, the algorithm, and each engine with its versions (without
    starting Spark): the Spark engine's Spark and the jar it would load, the Arrow engine's pyarrow and numpy; an
    engine that is not installed says what to install."""
    lines = [f"dsha {__version__}", f"algorithm: {ALGORITHM}"]
    engines = []
    if installed("pyspark"):
        spark, scala = spark_runtime()
        lines.append(f"spark: {spark} (Scala {scala}), pyspark {_version_of('pyspark')}")
        try:
            jar = jar_path()
            lines.append(f"jar: {jar}" + (" (from DSHA_JAR)" if os.environ.get("DSHA_JAR") else ""))
            engines.append("spark")
        except Exception as e:  # no jar for this Spark: the error names the lines dsha supports
            lines.append(f"jar: none: {e}")
    else:
        lines.append(f"spark: not installed ({install_hint('spark')})")
    if arrow_installed():
        lines.append(f"arrow: pyarrow {_version_of('pyarrow')}, numpy {_version_of('numpy')}")
        engines.append("arrow")
    else:
        missing = " and ".join(m for m in ("pyarrow", "numpy") if not installed(m))
        lines.append(f"arrow: not installed: no {missing} ({install_hint('arrow')})")
    lines.append(f"engines: {', '.join(engines) or 'none'}")
    return "\n".join(lines)


def _version_of(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:  # e.g. pyspark from $SPARK_HOME/python, no package metadata
        return getattr(importlib.import_module(package), "__version__", "unknown")


class _Version(argparse.Action):
    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 default: Any = argparse.SUPPRESS, help: Optional[str] = None) -> None:
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Union[str, Sequence[Any], None], option_string: Optional[str] = None) -> None:
        print(version_text())
        parser.exit()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dsha", description="Logical, order-independent digests of tables (Spark).")
    p.add_argument("--version", action=_Version,
                   help="print dsha's version, the algorithm and each engine's versions (the Spark engine's jar), "
                        "and exit")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--format", help="parquet, orc, json, csv, avro, text, delta (default: from the path or its "
                                         "files, else parquet)")
    common.add_argument("--force", action="store_true",
                        help="with --format: read a Delta or Iceberg table's directory as plain files (every file, "
                             "those its log removed included)")
    common.add_argument("--columns", help="comma-separated columns to hash (default: all)")
    common.add_argument("--exclude", metavar="COL[,COL...]",
                        help="comma-separated columns to leave out, such as audit columns (_ingested_at): the digest "
                             "of the table without them; not with --columns")
    common.add_argument("--master", default=os.environ.get("DSHA_MASTER", "local[*]"),
                        help="Spark master (default: local[*], an embedded Spark; not used when the caller's "
                             "session is borrowed)")
    common.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark setting")
    common.add_argument("--json", action="store_true", help="print the result as JSON")
    common.add_argument("--quiet", action="store_true", help="no progress bar")
    common.add_argument("--verbose", action="store_true", help="show Spark's logs and stack traces")
    common.add_argument("--phases", action="store_true",
                        help="a line per step on stderr with its time (start Spark, plan and digest each input, read "
                             "and write the store, the steps of a diff) also when stderr is not a terminal; on a "
                             "terminal they are shown unless --quiet or --json")
    sub = p.add_subparsers(dest="command", required=True)
    hash.add_parser(sub, common)
    compare.add_parser(sub, common)
    diff.add_parser(sub, common)
    diff_arrow.add_options(sub.choices["diff"])  # --engine: the Arrow engine's diff (cli/diff_arrow.py)
    store.add_parsers(sub, common)
    return p
