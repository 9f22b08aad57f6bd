"""`dsha check` and `dsha record`: has anything changed since a step's last recorded run?

    dsha check NAME INPUT... --store S   exit 0 unchanged, 1 changed (or never recorded), 2 error
    dsha record NAME INPUT... --store S  records the inputs' fingerprints as NAME's last run

An INPUT is a path (its format from --format, else inferred as for `dsha hash`) or table:NAME. A store is a
directory (local, file:, or any Hadoop path) or table:NAME. "Never recorded" exits 1: the step has to run, so
`dsha check ... || (run_step && dsha record ...)` works from the first run on. A corrupt store entry exits 2.

The engine is chosen as for `dsha hash`: with `--engine auto`, the Arrow engine (no JVM: about a second for a small
input) when every input is a local Parquet, ORC or Arrow file or directory without a manifest, the store is a local
directory and nothing asks for Spark (--master, --conf, --approximate); Spark otherwise. Both give the same digests,
so a step recorded by one is checked by the other.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from dsha.cli import exit_codes
from dsha.cli.args import ENGINES, check_sources
from dsha.cli.engine import arrow_as_asked, arrow_installed, has_manifest
from dsha.core.paths import local_path
from dsha.dependencies import install_hint, installed
from dsha.errors import UsageError
from dsha.inputs import Input, Path, as_input
from dsha.orchestrators import arrow_path_refusal, changes_on
from dsha.skip import Changes, changed
from dsha.store import DirectoryStore, open_store

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["COMMANDS", "add_parsers", "choose", "run", "validate"]

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
        p.add_argument("--engine", choices=ENGINES, default="auto",
                       help="arrow: dsha.arrow, without Spark or a JVM (local files, a local store); spark: an "
                            "embedded or remote Spark; auto (default): arrow for local Parquet, ORC and Arrow "
                            "inputs without a manifest when the store is local and nothing asks for Spark")
        p.add_argument("--no-cache", action="store_true",
                       help="read every file: no per-file states from the last record or a manifest (a digest "
                            "taken from them says so on stderr)")
        p.add_argument("--approximate", action="store_true",
                       help="compare file metadata only (dsha-meta-v1: paths, sizes, modification times; no data "
                            "read): may report a change that is none, never misses one it can see (docs/changes.md)")


def validate(args: argparse.Namespace) -> None:
    """What can be checked before Spark starts: the options and the local input paths."""
    for option in ("columns", "exclude"):
        if getattr(args, option):
            raise UsageError(f"--{option} is not supported by dsha {args.command}")
    if args.approximate and args.no_cache:
        raise UsageError("--approximate reads no data: it takes no --no-cache")
    check_sources(args.inputs, args.format, args.force)
    if not args.store.startswith("table:") and local_path(args.store) is not None:  # a bad store: exit 2 at once
        st = open_store(args.store, create=getattr(args, "create_store", False))
        if args.command == "record" and isinstance(st, DirectoryStore):
            st.check()
        st.latest(args.name)


def _inputs(args: argparse.Namespace) -> List[Union[str, Path]]:
    return [i if i.startswith("table:") else Path(i, args.format, args.force) for i in args.inputs]


def _why_not_arrow(args: argparse.Namespace) -> Optional[str]:
    """Why the Arrow engine cannot run this check or record, or None when it can."""
    if args.approximate:
        return "--approximate needs the Spark engine (file metadata through Hadoop's listing)"
    if local_path(args.store) is None or args.store.startswith("table:"):
        return f"the Arrow engine keeps a local store, not {args.store}"
    for i in map(as_input, _inputs(args)):
        refusal = arrow_path_refusal(i)
        if refusal:
            return refusal
        assert isinstance(i, Path)
        if has_manifest(i.path):
            return f"{i.path} has a manifest: its per-file states are read by the Spark engine"
    return None


def choose(args: argparse.Namespace) -> str:
    """``arrow`` or ``spark`` for a check or record: what --engine says (checked), or for auto, arrow when it can
    run and nothing asks for Spark."""
    why_not = _why_not_arrow(args)
    if args.engine == "arrow":
        return arrow_as_asked(why_not)
    if args.engine == "auto" and not why_not and args.master == "local[*]" and not args.conf and arrow_installed():
        return "arrow"
    if not installed("pyspark"):
        raise UsageError(f"{why_not or 'the Spark engine was asked for'}, and pyspark is not installed "
                         f"({install_hint('spark')})")
    return "spark"


def run_arrow(args: argparse.Namespace) -> int:
    """The check or record on the Arrow engine: every input file read in this process, no JVM."""
    named: Dict[str, Input] = {x.key: x for x in map(as_input, _inputs(args)) if isinstance(x, Path)}
    return _report(args, changes_on(named, store=args.store, name=args.name, version=args.code_version,
                                    engine="arrow", create_store=getattr(args, "create_store", False)))


def run(args: argparse.Namespace, spark: SparkSessionLike) -> int:
    changes = changed(_inputs(args), store=args.store, name=args.name, version=args.code_version, spark=spark,
                      exact=not args.approximate, create_store=getattr(args, "create_store", False),
                      use_cache=not args.no_cache)
    return _report(args, changes)


def _report(args: argparse.Namespace, changes: Changes) -> int:
    for key, i in changes.current.inputs.items():  # what an answer rests on besides the data read now
        if i.stored_states is not None:
            print(f"dsha: {key}: " + i.stored_states.format(reread="--no-cache"), file=sys.stderr)
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
