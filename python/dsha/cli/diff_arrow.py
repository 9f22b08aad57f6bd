"""``dsha diff`` on the Arrow engine: two local Parquet, ORC or Arrow files (or directories of them) compared without
Spark or a JVM (:mod:`dsha.arrow.diff`), chosen as ``check`` and ``record`` choose it (``--engine auto|arrow|spark``):
``auto`` takes it when both inputs are local typed files and nothing asks for Spark (``--master``, ``--conf``,
``--key``, a table), and no Spark session is there already (``main(spark=...)``, or one active in the process): a
diff on a session that is running costs no JVM start, and has what only Spark's diff has (--key). Its phase lines
are the Arrow diff's steps (:mod:`dsha.arrow.diff`: each sketch pass, the rows read) and the text's (``print_text``)."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any, Dict, Optional

from dsha.cli import exit_codes
from dsha.cli.args import ENGINES, excluded
from dsha.cli.diff import column_list, jsonable, print_text
from dsha.cli.engine import ARROW_AUTO_FORMATS, arrow_as_asked, arrow_cannot_read, arrow_installed
from dsha.core.paths import format_of, local_path
from dsha.dependencies import install_hint, installed
from dsha.errors import UsageError
from dsha.inputs import resolve_columns

__all__ = ["add_options", "choose", "run_arrow"]


def add_options(d: argparse.ArgumentParser) -> None:
    d.add_argument("--engine", choices=ENGINES, default="auto",
                   help="arrow: dsha.arrow, without Spark or a JVM (local files, without --key); spark: an embedded "
                        "or remote Spark; auto (default): arrow for local Parquet, ORC and Arrow files when nothing "
                        "asks for Spark (--master, --conf, --key, a table)")


def _why_not_arrow(args: argparse.Namespace) -> Optional[str]:
    if args.key:
        return "--key pairs rows with the Spark engine"
    return arrow_cannot_read([args.left, args.right], args)


def session_running() -> bool:
    """Whether this process has an active Spark session (without importing pyspark when nothing has)."""
    if "pyspark" not in sys.modules:
        return False
    from dsha.cli.session import active_session

    return active_session() is not None


def choose(args: argparse.Namespace, borrowed: bool = False) -> str:
    """``arrow`` or ``spark`` for a diff: what --engine says (checked), or for auto, arrow when it can run, both
    inputs are typed files (Parquet, ORC, Arrow), nothing asks for Spark and no session is ``borrowed``."""
    why_not = _why_not_arrow(args)
    if args.engine == "arrow":
        return arrow_as_asked(why_not)
    typed = all(format_of(s, args.format, args.force, note=False) in ARROW_AUTO_FORMATS
                for s in (args.left, args.right)) if why_not is None else False
    asked = args.master != "local[*]" or args.conf or borrowed
    if args.engine == "auto" and typed and not asked and arrow_installed():
        return "arrow"
    if not installed("pyspark"):
        raise UsageError(f"{why_not or 'the Spark engine was asked for'}, and pyspark is not installed "
                         f"({install_hint('spark')})")
    return "spark"


def _options(source: str, args: argparse.Namespace) -> Dict[str, Any]:
    return {"format": format_of(source, args.format, args.force)}


def run_arrow(args: argparse.Namespace) -> int:
    """The diff in this process: both inputs read by the Arrow engine, the differing rows printed (or written as
    Parquet with --output, a report with --html)."""
    import pyarrow.parquet as pq

    import dsha.arrow
    from dsha.arrow.diff import diff
    from dsha.cli.output import dsha_warnings_printed
    from dsha.core.diff_html import MAX_CHARS, render

    started = time.time()
    with dsha_warnings_printed():  # a note on sidecars left out, the fallback's warning: one line each
        options = [_options(s, args) for s in (args.left, args.right)]
        paths = [local_path(s) for s in (args.left, args.right)]
        columns = None
        wanted = column_list(args.columns)
        if wanted:
            columns = resolve_columns(dsha.arrow.column_names(paths[0], format=options[0]["format"]), wanted,
                                      args.left)
        extra: Dict[str, Any] = {"column_digests": args.column_digests}
        if args.max_cells is not None:
            extra["max_cells"] = args.max_cells
        d = diff(paths[0], paths[1], columns, left_options=options[0], right_options=options[1],
                 exclude=excluded(args), **extra)
    seconds = time.time() - started
    frames = {} if d.schema_difference else {"only_left": d.only_left, "only_right": d.only_right}
    if args.output and frames:
        for name, table in frames.items():
            os.makedirs(os.path.join(args.output, name))
            pq.write_table(table, os.path.join(args.output, name, "part-00000.parquet"))
    if args.html:
        with open(local_path(args.html) or args.html, "w", encoding="utf-8") as f:
            f.write(render(d.report(args.limit, names=(args.left, args.right)), document=True, max_chars=MAX_CHARS))
    if args.json:
        shown = {name: [jsonable(r) for r in t.slice(0, args.limit).to_pylist()]
                 for name, t in frames.items() if t is not None and args.limit}
        out = d.to_dict()
        out.update(left_source=args.left, right_source=args.right, rows=shown, seconds=round(seconds, 3),
                   engine="arrow")
        for option in ("output", "html"):
            if getattr(args, option):
                out[option] = getattr(args, option)
        print(json.dumps(out))
    else:
        same_fields: Any = d  # what print_text reads of a Diff, an ArrowDiff has
        print_text(args, same_fields, seconds)  # as on Spark: the digests, what differs, one aligned table
    return exit_codes.EQUAL if d else exit_codes.DIFFERENT
