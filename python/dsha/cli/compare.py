"""``dsha compare A B``: are two tables equal? (exit 0 equal, 1 different)"""
from __future__ import annotations

import argparse
import time
from typing import TYPE_CHECKING, Any

from dsha.cli import args as options
from dsha.cli import exit_codes
from dsha.cli.engine import arrow_fingerprint
from dsha.cli.output import dsha_warnings_printed, print_compare
from dsha.core.fingerprint import Comparison
from dsha.core.phases import step
from dsha.digests import equal
from dsha.inputs import load

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["add_parser", "run", "run_arrow", "validate"]


def add_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    c = sub.add_parser("compare", parents=[common], help="compare two tables (exit 0 equal, 1 different)")
    c.add_argument("left", help="path (or table:NAME)")
    c.add_argument("right", help="path (or table:NAME)")
    options.add_digest_options(c)


def validate(args: argparse.Namespace) -> None:
    options.validate_digest_options(args)
    options.check_columns(args)
    options.check_sources([args.left, args.right], args.format, args.force)


def _exit(cmp: Comparison) -> int:
    return exit_codes.EQUAL if cmp else exit_codes.DIFFERENT


def run(args: argparse.Namespace, spark: SparkSessionLike) -> int:
    started = time.time()
    cols = options.columns(args)
    with dsha_warnings_printed(), step("plan both inputs"):  # a note on sidecars left out: one line per path
        left, right = (load(spark, options.source_input(s, args.format, args.force), cols)
                       for s in (args.left, args.right))
    with step("digest both inputs"):  # one job per side
        cmp = equal(left, right, exclude=options.excluded(args), **options.algorithm_args(args))
    print_compare(args, "spark", cmp, time.time() - started)
    return _exit(cmp)


def run_arrow(args: argparse.Namespace) -> int:
    started = time.time()
    with dsha_warnings_printed():
        cmp = Comparison(arrow_fingerprint(args.left, args)[0], arrow_fingerprint(args.right, args)[0])
    print_compare(args, "arrow", cmp, time.time() - started)
    return _exit(cmp)
