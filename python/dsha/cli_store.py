"""`dsha check` and `dsha record`: has anything changed since a step's last recorded run?

    dsha check NAME INPUT... --store S   exit 0 unchanged, 1 changed (or never recorded), 2 error
    dsha record NAME INPUT... --store S  records the inputs' fingerprints as NAME's last run

An INPUT is a path (its format from --format, else inferred as for `dsha hash`) or table:NAME. A store is a
directory (local, file:, or any Hadoop path) or table:NAME. "Never recorded" exits 1: the step has to run, so
`dsha check ... || (run_step && dsha record ...)` works from the first run on. A corrupt store entry exits 2.
"""
from __future__ import annotations

import json
from typing import Any

COMMANDS = ("check", "record")
EXIT_UNCHANGED, EXIT_CHANGED = 0, 1


def add_parsers(sub: Any, common: Any) -> None:
    help_text = {"check": "has anything changed since `dsha record`? (exit 0 no, 1 yes or never recorded, 2 error)",
                 "record": "record the inputs' fingerprints as the step's last run"}
    for command in COMMANDS:
        p = sub.add_parser(command, parents=[common], help=help_text[command])
        p.add_argument("name", help="the step's name in the store")
        p.add_argument("inputs", nargs="+", metavar="INPUT", help="path (or table:NAME)")
        p.add_argument("--store", required=True, help="directory (local, file:, hdfs://, ...) or table:NAME")
        p.add_argument("--code-version", help="the step's code version, compared like an input")
        p.add_argument("--approximate", action="store_true",
                       help="compare file metadata only (dsha-meta-v1: paths, sizes, modification times; no data "
                            "read): may report a change that is none, never misses one it can see (README)")


def validate(args: Any) -> None:
    """What can be checked before Spark starts: the options and the local input paths."""
    from dsha.cli import UsageError, _check_local, _local
    from dsha.store import open_store

    if args.columns:
        raise UsageError(f"--columns is not supported by dsha {args.command}")
    for source in args.inputs:
        if not source.startswith("table:"):
            _check_local(source)
    if not args.store.startswith("table:") and _local(args.store) is not None:  # a bad store: exit 2 at once
        open_store(args.store).latest(args.name)


def run(args: Any, spark: Any) -> int:
    import dsha

    inputs = [i if i.startswith("table:") else dsha.Path(i, args.format) for i in args.inputs]
    changes = dsha.changed(inputs, store=args.store, name=args.name, version=args.code_version, spark=spark,
                           exact=not args.approximate)
    fingerprints = {k: {"kind": i.kind, "format": i.format, "digest": i.fingerprint.digest, "rows": i.fingerprint.rows}
                    for k, i in changes.current.inputs.items()}
    if args.command == "record":
        record = changes.record()
        if args.json:
            print(json.dumps({"name": args.name, "recorded_at": record.recorded_at, "inputs": fingerprints}))
        else:
            for key, i in record.inputs.items():
                print(f"{i.fingerprint.digest}  {key}  ({i.fingerprint.rows} rows)")
        return EXIT_UNCHANGED
    if args.json:
        print(json.dumps({"name": args.name, "changed": bool(changes),
                          "recorded_at": changes.previous.recorded_at if changes.previous else None,
                          "changes": [{"input": c.input, "what": c.what, "detail": c.detail} for c in changes],
                          "inputs": fingerprints}))
    else:
        print(("changed:\n  " + changes.explain().replace("\n", "\n  ")) if changes else changes.explain())
    return EXIT_CHANGED if changes else EXIT_UNCHANGED
