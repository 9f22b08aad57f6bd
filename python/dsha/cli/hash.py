"""``dsha hash``: the digest of a table (a path, ``table:NAME`` or ``--table NAME``)."""
from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from dsha.cli import exit_codes
from dsha.cli.args import (
    add_digest_options,
    algorithm_args,
    check_columns,
    check_sources,
    columns,
    excluded,
    source_input,
    validate_digest_options,
)
from dsha.cli.engine import arrow_fingerprint
from dsha.cli.output import dsha_warnings_printed, print_hash
from dsha.core.paths import format_of, has_glob_characters
from dsha.errors import UsageError
from dsha.inputs import Input, Table, fingerprint_input, is_iceberg

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["add_parser", "run", "run_arrow", "validate"]


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    h = sub.add_parser("hash", parents=[common], help="print the digest of a table")
    h.add_argument("path", nargs="?", help="file or directory (any Hadoop path)")
    h.add_argument("--table", help="a table name instead of a path")
    h.add_argument("--state", metavar="FILE", help="a cache of per-file digest states outside the data: read when it "
                                                   "matches, then rewritten (the data directory is left alone)")
    h.add_argument("--update-manifest", action="store_true",
                   help="write the per-file states into PATH/_dsha/manifest.json (beside the data) for the next run")
    h.add_argument("--no-cache", action="store_true", help="read every file, ignoring any manifest or --state cache")
    h.add_argument("--approximate", action="store_true",
                   help="a fingerprint of file metadata only (dsha-meta-v1: paths, sizes, modification times; no data "
                        "read), not a content digest")
    add_digest_options(h)


def _plain_path(args: argparse.Namespace) -> bool:
    """A PATH that per-file states can digest: a directory or a file (not a pattern, not a table, no glob character
    in its name: the per-file route gives Spark's reader the path unescaped), all columns."""
    return not (args.table or args.columns or args.exclude or args.path.startswith("table:")
                or has_glob_characters(args.path))


def validate(args: argparse.Namespace) -> None:
    """The flag rules, and the local input, before Spark starts."""
    if not (args.path or args.table):
        raise UsageError("give a PATH or --table NAME")
    if args.approximate and (args.state or args.update_manifest or args.no_cache):
        raise UsageError("--approximate reads no data: it takes no --state, --update-manifest or --no-cache")
    validate_digest_options(args)
    check_columns(args)
    if (args.secure or args.key_file) and (args.approximate or args.state or args.update_manifest):
        raise UsageError("--secure and --key-file hash every row: they take no --approximate, --state or "
                         "--update-manifest")
    iceberg_state = (bool(args.table) and args.state is not None and not args.update_manifest and not args.columns
                     and not args.exclude)
    if (args.state or args.update_manifest) and not _plain_path(args) and not iceberg_state:
        raise UsageError("--state and --update-manifest need a PATH (a directory or a file, not a pattern, no "
                         "{}[]*?\\ in its name) and "
                         "all columns (no --columns or --exclude; --table only with --state, for an Iceberg table)")
    if not args.table:
        check_sources([args.path], args.format, args.force)
        fmt = format_of(args.path, args.format, args.force, note=False)
        if (args.state or args.update_manifest) and fmt == "delta":
            raise UsageError("per-file states (--state, --update-manifest) are not used for Delta tables; "
                             "hash them with --no-cache")


def _input(args: argparse.Namespace) -> Input:
    return Table(args.table) if args.table else source_input(args.path, args.format, args.force)


def run(args: argparse.Namespace, spark: SparkSessionLike) -> int:
    x = _input(args)
    if args.table and args.state and not is_iceberg(spark, x):
        raise UsageError(f"--state and --update-manifest need a PATH (a directory or a file, not a pattern) and all "
                         f"columns; --state goes with --table only for an Iceberg table, and {args.table} is not one")
    started = time.time()
    with dsha_warnings_printed():
        r = fingerprint_input(spark, x, columns=columns(args), exact=not args.approximate, state=args.state,
                              update_manifest=args.update_manifest, use_cache=not args.no_cache,
                              exclude=excluded(args), **algorithm_args(args))
    print_hash(args, "spark", r.fingerprint, time.time() - started, r.files, r.format)
    return exit_codes.OK


def run_arrow(args: argparse.Namespace) -> int:
    with dsha_warnings_printed():
        fp, seconds = arrow_fingerprint(args.path, args)
    print_hash(args, "arrow", fp, seconds)
    return exit_codes.OK
