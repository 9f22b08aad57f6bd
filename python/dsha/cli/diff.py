"""``dsha diff A B``: the rows that differ between two tables (SPEC.md §17), printed or written as Parquet, and a
report to look at (``--html``)."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional

from dsha.cli import exit_codes
from dsha.cli.args import check_columns, check_sources, excluded, source_input
from dsha.cli.output import dsha_warnings_printed
from dsha.core.diff_table import WIDTH, rows_table
from dsha.core.paths import local_path
from dsha.core.phases import step
from dsha.errors import UsageError
from dsha.inputs import load
from dsha.jarfree.diff import diff  # the jar's, or the jar-free path on a session without it
from dsha.spark.diff import Diff

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["add_parser", "column_list", "jsonable", "print_text", "run", "validate"]


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    d = sub.add_parser("diff", parents=[common],
                       help="which rows differ between two tables, without a key (exit 0 equal, 1 different)")
    d.add_argument("left", help="path (or table:NAME)")
    d.add_argument("right", help="path (or table:NAME)")
    d.add_argument("--key", help="comma-separated key columns: differing rows with one key on both sides are "
                                 "reported as per-column changes")
    d.add_argument("--limit", type=int, default=10, metavar="N",
                   help="differing rows to print per side, and changes (default 10; 0: counts only)")
    d.add_argument("--output", metavar="DIR",
                   help="write the differing rows as Parquet: DIR/only_left, DIR/only_right, DIR/changed (with "
                        "--key); DIR must not exist")
    d.add_argument("--html", metavar="FILE",
                   help="also write a report to look at: one self-contained HTML page (counts, schema and per-column "
                        "differences, up to --limit differing rows of each kind, both digests); FILE must not exist")
    d.add_argument("--column-digests", action="store_true",
                   help="also each column's digest in the first pass: which columns differ, before rows are read "
                        "(one more hash per value)")
    d.add_argument("--max-cells", type=int, default=None, metavar="CELLS",
                   help="the largest sketch before the diff falls back to a join (default 786432: about 600,000 "
                        "differing rows)")


def column_list(text: Optional[str]) -> Optional[List[str]]:
    """The names of a comma-separated option (``--key``, ``--columns``), or None when it is not given."""
    return [c.strip() for c in text.split(",") if c.strip()] if text else None


def validate(args: argparse.Namespace) -> None:
    check_sources([args.left, args.right], args.format, args.force)
    check_columns(args)
    if args.limit < 0:
        raise UsageError("--limit is a number of rows, 0 or more")
    if args.output:
        _check_creatable(args.output)
    if args.html:
        _check_new_file(args.html)


def _check_creatable(output: str) -> None:
    """--output names a new directory that can be made (its nearest existing parent a writable directory): checked
    before the diff runs, not after. Other file systems than the local one are left to Spark."""
    local = local_path(output)
    if local is not None:
        _check_new(f"--output {output}", local, "directory", "made", parents_made=True)


def _check_new_file(html: str) -> None:
    """--html names a new local file in an existing writable directory: checked before the diff runs."""
    local = local_path(html)
    if local is None:
        raise UsageError(f"--html {html}: the report is written to a local file; give a local path")
    _check_new(f"--html {html}", local, "file", "written", parents_made=False)


def _check_new(option: str, local: str, kind: str, done: str, parents_made: bool) -> None:
    """``local`` does not exist and can be ``done`` (made, written) in its parent directory, or in its nearest
    existing ancestor when the missing parents are made too: a one-line error naming ``option`` otherwise."""
    if os.path.lexists(local):
        raise UsageError(f"{option} exists: give a new {kind} (nothing is overwritten)")
    parent = os.path.dirname(os.path.abspath(local))
    while parents_made and not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise UsageError(f"{option} cannot be {done}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{option} cannot be {done}: {parent} is not writable")
    try:  # what the permission bits do not tell (root, a read-only or pseudo file system): a directory made, removed
        os.rmdir(tempfile.mkdtemp(prefix=".dsha-probe-", dir=parent))
    except OSError as e:
        raise UsageError(f"{option} cannot be {done}: nothing can be created in {parent} ({e.strerror})") from None


def run(args: argparse.Namespace, spark: SparkSessionLike) -> int:
    started = time.time()
    # all columns: --columns is dsha.diff's to apply (the key stays in)
    with dsha_warnings_printed():  # a note on sidecars left out: one line per path
        left, right = (load(spark, source_input(args.left, args.format, args.force)),
                       load(spark, source_input(args.right, args.format, args.force)))
    options: Dict[str, Any] = {"column_digests": args.column_digests}
    if args.max_cells is not None:
        options["max_cells"] = args.max_cells
    with diff(left, right, key=column_list(args.key), columns=column_list(args.columns), exclude=excluded(args),
              **options) as d:
        seconds = time.time() - started
        # schemas that differ: no rows were compared (Diff.only_left/only_right say so)
        frames = {} if d.schema_difference else {"only_left": d.only_left, "only_right": d.only_right,
                                                 "changed": d.changed}
        shown = {} if not args.limit or not args.json else {
            name: [jsonable(r.asDict(recursive=True)) for r in df.limit(args.limit).collect()]
            for name, df in frames.items() if df is not None}
        if args.output and not d.schema_difference:
            for name, df in frames.items():
                if df is not None:
                    df.write.parquet(os.path.join(args.output, name))
        if args.html:
            d.to_html(local_path(args.html), max_rows=args.limit, names=(args.left, args.right))
        if args.json:
            out = d.to_dict()
            out.update(left_source=args.left, right_source=args.right, rows=shown, seconds=round(seconds, 3))
            if args.output:
                out["output"] = args.output
            if args.html:
                out["html"] = args.html
            print(json.dumps(out))
        else:
            print_text(args, d, seconds)
        return exit_codes.EQUAL if d else exit_codes.DIFFERENT


def jsonable(v: Any) -> Any:
    """A value of a row as JSON holds it: bytes as hex, other objects as their text."""
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


def print_text(args: argparse.Namespace, d: Diff, seconds: float) -> None:
    """The digests, what differs (``Diff.explain``), then up to --limit differing rows of each kind as an aligned
    table (``core/diff_table``: rows paired where few cells differ, the differing cells marked), as wide as the
    terminal."""
    if d.left_digest:
        print(f"{d.left_digest}  {args.left}")
        print(f"{d.right_digest}  {args.right}")
    if d.key or d.equal or d.schema_difference:
        print(d.explain())
    else:
        with step("count the differing values per column"):  # Diff.columns: a job over the differing rows
            print(d.explain())
    if args.limit and not d.equal and not d.schema_difference:
        width = shutil.get_terminal_size((WIDTH, 24)).columns
        with step("read the rows shown"):
            report = d.report(args.limit)
        for line in rows_table(report, width=max(40, width)):
            print(line)
    if args.output and not d.schema_difference:
        print(f"differing rows written to {args.output}", file=sys.stderr)
    if args.html:
        print(f"report written to {args.html}", file=sys.stderr)
    print(f"time: {seconds:.2f} s  method: {d.method}", file=sys.stderr)
