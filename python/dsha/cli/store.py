"""`dsha check` and `dsha record`: has anything changed since a step's last recorded run?

    dsha check NAME INPUT... --store S   exit 0 unchanged, 1 changed (or never recorded), 2 error
    dsha record NAME INPUT... --store S  records the inputs' fingerprints as NAME's last run

An INPUT is a path (its format from --format, else inferred as for `dsha hash`) or table:NAME. A store is a
directory (local, file:, or any Hadoop path) or table:NAME. "Never recorded" exits 1: the step has to run, so
`dsha check ... || (run_step && dsha record ...)` works from the first run on. A corrupt store entry exits 2.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Union

from dsha.cli import exit_codes
from dsha.cli.args import check_sources
from dsha.core.paths import local_path
from dsha.errors import UsageError
from dsha.inputs import Path
from dsha.skip import changed
from dsha.store import DirectoryStore, open_store

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["COMMANDS", "add_parsers", "run", "validate"]

COMMANDS = ("check", "record")


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    help_text = {"check": "has anything changed since `dsha record`? (exit 0 no, 1 yes or never recorded, 2 error)",
                 "record": "record the inputs' fingerprints as the step's last run"}
    for command in COMMANDS:
        p = sub.add_parser(command, parents=[common], help=help_text[command])
        p.add_argument("name", help="the step's name in the store")
        p.add_argument("inputs", nargs="+", metavar="INPUT", help="path (or table:NAME)")
        p.add_argument("--store", required=True, help="directory (local, file:, hdfs://, ...) or table:NAME")
        if command == "record":
            p.add_argument("--create-store", action="store_true",
                           help="make --store a store if it is not one yet: create it with its parents, or mark a "
                                "non-empty directory (without it, a store whose parent is missing is an error)")
        p.add_argument("--code-version", help="the step's code version, compared like an input")
        p.add_argument("--approximate", action="store_true",
                       help="compare file metadata only (dsha-meta-v1: paths, sizes, modification times; no data "
                            "read): may report a change that is none, never misses one it can see (docs/changes.md)")


def validate(args: argparse.Namespace) -> None:
    """What can be checked before Spark starts: the options and the local input paths."""
    if args.columns:
        raise UsageError(f"--columns is not supported by dsha {args.command}")
    check_sources(args.inputs, args.format, args.force)
    if not args.store.startswith("table:") and local_path(args.store) is not None:  # a bad store: exit 2 at once
        st = open_store(args.store, create=getattr(args, "create_store", False))
        if args.command == "record" and isinstance(st, DirectoryStore):
            st.check()
        st.latest(args.name)


def run(args: argparse.Namespace, spark: SparkSessionLike) -> int:
    inputs: List[Union[str, Path]] = [i if i.startswith("table:") else Path(i, args.format, args.force)
                                      for i in args.inputs]
    changes = changed(inputs, store=args.store, name=args.name, version=args.code_version, spark=spark,
                      exact=not args.approximate, create_store=getattr(args, "create_store", False))
    fingerprints: Dict[str, Dict[str, Any]] = {
        k: {"kind": i.kind, "format": i.format, "digest": i.fingerprint.digest, "rows": i.fingerprint.rows}
                    for k, i in changes.current.inputs.items()}
    if args.command == "record":
        record = changes.record()
        if args.json:
            print(json.dumps({"name": args.name, "recorded_at": record.recorded_at, "inputs": fingerprints}))
        else:
            for key, i in record.inputs.items():
                print(f"{i.fingerprint.digest}  {key}  ({i.fingerprint.rows} rows)")
        print(f"recorded {args.name} in {args.store}", file=sys.stderr)
        return exit_codes.OK
    if args.json:
        print(json.dumps({"name": args.name, "changed": bool(changes),
                          "recorded_at": changes.previous.recorded_at if changes.previous else None,
                          "changes": [{"input": c.input, "what": c.what, "detail": c.detail} for c in changes],
                          "inputs": fingerprints}))
    else:
        print(("changed:\n  " + changes.explain().replace("\n", "\n  ")) if changes else changes.explain())
    return exit_codes.CHANGED if changes else exit_codes.UNCHANGED
