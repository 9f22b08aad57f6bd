"""The command line's parser: options every command takes, and one sub-parser per command (each command's module
adds its own)."""
from __future__ import annotations

import argparse
import os
from typing import Any, Optional, Sequence, Union

from dsha import ALGORITHM, __version__
from dsha.cli import compare, diff, hash, store
from dsha.spark.session import jar_path, spark_runtime

__all__ = ["parser", "version_text"]


def version_text() -> str:
    """What ``dsha --version`` prints: dsha's version, the algorithm, the Spark it would run on and the jar it would
    load (without starting Spark)."""
    lines = [f"dsha {__version__}", f"algorithm: {ALGORITHM}"]
    try:
        spark, scala = spark_runtime()
        lines.append(f"spark: {spark} (Scala {scala})")
    except Exception as e:  # no pyspark installed
        lines.append(f"spark: not found ({e})")
    try:
        jar = jar_path()
        lines.append(f"jar: {jar}" + (" (from DSHA_JAR)" if os.environ.get("DSHA_JAR") else ""))
    except Exception as e:
        lines.append(f"jar: none: {e}")
    return "\n".join(lines)


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
    p.add_argument("--version", action=_Version, help="print dsha's version, the algorithm, the Spark version and the "
                                                      "jar in use, and exit")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--format", help="parquet, orc, json, csv, avro, text, delta (default: from the path or its "
                                         "files, else parquet)")
    common.add_argument("--force", action="store_true",
                        help="with --format: read a Delta or Iceberg table's directory as plain files (every file, "
                             "those its log removed included)")
    common.add_argument("--columns", help="comma-separated columns to hash (default: all)")
    common.add_argument("--master", default=os.environ.get("DSHA_MASTER", "local[*]"),
                        help="Spark master (default: local[*], an embedded Spark; not used when the caller's "
                             "session is borrowed)")
    common.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark setting")
    common.add_argument("--json", action="store_true", help="print the result as JSON")
    common.add_argument("--quiet", action="store_true", help="no progress bar")
    common.add_argument("--verbose", action="store_true", help="show Spark's logs and stack traces")
    sub = p.add_subparsers(dest="command", required=True)
    hash.add_parser(sub, common)
    compare.add_parser(sub, common)
    diff.add_parser(sub, common)
    store.add_parsers(sub, common)
    return p
