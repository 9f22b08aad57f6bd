"""``main``: parse, check what can be checked before Spark starts, choose the engine, run the command, and turn
every error into one line on stderr and an exit code."""
from __future__ import annotations

import sys
import traceback
from typing import TYPE_CHECKING, List, Optional

from dsha.cli import compare, diff, diff_arrow, exit_codes, hash, store
from dsha.cli.args import check_conf
from dsha.cli.engine import choose
from dsha.cli.output import hint, short_error
from dsha.cli.parser import parser
from dsha.cli.session import spark_session
from dsha.core.phases import Phases, reporting, wanted
from dsha.errors import UsageError

if TYPE_CHECKING:
    import argparse

    from dsha.spark.types import SparkSessionLike

__all__ = ["main"]


def _run(args: argparse.Namespace, spark: Optional[SparkSessionLike]) -> int:
    check_conf(args)
    if args.command in store.COMMANDS:
        store.validate(args)
        if store.choose(args) == "arrow":
            return store.run_arrow(args)
        with spark_session(args, spark) as session:
            return store.run(args, session)
    if args.command == "diff":
        diff.validate(args)
        if diff_arrow.choose(args, borrowed=spark is not None or diff_arrow.session_running()) == "arrow":
            return diff_arrow.run_arrow(args)
        with spark_session(args, spark) as session:
            return diff.run(args, session)
    command = hash if args.command == "hash" else compare
    command.validate(args)
    if choose(args) == "arrow":
        return command.run_arrow(args)
    with spark_session(args, spark) as session:
        return command.run(args, session)


def main(argv: Optional[List[str]] = None, *, spark: Optional[SparkSessionLike] = None) -> int:
    """Runs ``dsha`` with ``argv`` (default: ``sys.argv[1:]``) and returns its exit code (``exit_codes``), printing
    results on stdout and errors, one line each, on stderr.

    The Spark engine runs on a borrowed session when there is one — ``spark`` (a classic or Spark Connect session),
    else the session active in this process (``SparkSession.getActiveSession()``) — used as it is (``--master`` and
    ``--conf`` are ignored, without an error) and never stopped. Otherwise it starts its own session from
    ``--master`` and ``--conf`` (its JVM's start-up warnings filtered out unless ``--verbose``) and stops it when the
    command ends. ``--engine arrow`` (or ``auto``, where it applies) needs no session."""
    args = parser().parse_args(argv)
    # a line per step with its time (starting Spark, planning and digesting each input, reading and writing the
    # store, the steps of a diff), for a person at a terminal or asked with --phases (core/phases)
    shown = wanted(sys.stderr, args.phases, quiet=args.quiet or args.json)
    try:
        with reporting(Phases() if shown else None):
            return _run(args, spark)
    except UsageError as e:
        print(f"dsha: error: {e}", file=sys.stderr)
        return exit_codes.ERROR
    except KeyboardInterrupt:
        print("dsha: interrupted", file=sys.stderr)
        return exit_codes.INTERRUPTED
    except Exception as e:  # Spark's errors: one clear line, the trace only on request
        if args.verbose:
            traceback.print_exc()
        print(f"dsha: error: {short_error(e)}{hint(e, args)}", file=sys.stderr)
        return exit_codes.ERROR
