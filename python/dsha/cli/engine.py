"""Which engine runs ``hash`` and ``compare`` (Spark, or the Arrow engine without Spark or a JVM), and the Arrow
engine's fingerprints: every algorithm (``--secure``, ``--key-file``: a consumer without Java verifies a published
digest; with pyspark installed, ``auto`` gives those to Spark, which hashes them faster)."""
from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Callable, List, Optional, Sequence, Tuple

from dsha.cli.args import algorithm_args, excluded
from dsha.core.fingerprint import Fingerprint
from dsha.core.paths import format_of, is_glob, local_path
from dsha.core.phases import step
from dsha.dependencies import arrow_installed, install_hint, installed
from dsha.errors import UsageError
from dsha.inputs import resolve_columns

__all__ = ["ARROW_AUTO_FORMATS", "ARROW_FORMATS", "arrow_as_asked", "arrow_cannot_read", "arrow_fingerprint",
           "arrow_installed", "choose", "has_manifest"]

# What the Arrow engine reads (dsha.arrow), and what `--engine auto` gives it: the typed formats, whose column types
# Spark and Arrow read alike (CSV and JSON types are inferred differently by each: arrow only when asked for).
ARROW_FORMATS = {"parquet", "orc", "arrow", "ipc", "feather", "csv", "json"}
ARROW_AUTO_FORMATS = {"parquet", "orc", "arrow", "ipc", "feather"}


def has_manifest(source: str) -> bool:
    """Whether a local directory holds a manifest (per-file states, which only the Spark engine reads)."""
    return os.path.isfile(os.path.join(local_path(source) or "", "_dsha", "manifest.json"))


def arrow_as_asked(why_not: Optional[str]) -> str:
    """``--engine arrow``: ``"arrow"``, or a one-line error saying why it cannot run (``why_not``, or what to
    install)."""
    if why_not:
        raise UsageError(why_not)
    if not arrow_installed():
        raise UsageError(f"--engine arrow needs pyarrow and numpy: {install_hint('arrow')}")
    return "arrow"


def _sources(args: argparse.Namespace) -> List[Optional[str]]:
    return [args.left, args.right] if args.command == "compare" else [args.path]


def _format(source: str, args: argparse.Namespace) -> str:
    return format_of(source, args.format, getattr(args, "force", False), note=False)


def arrow_cannot_read(sources: Sequence[Optional[str]], args: argparse.Namespace) -> Optional[str]:
    """Why the Arrow engine cannot read one of ``sources`` (a table, a path that is not local, a pattern, a format it
    has no reader for), or None when it can read them all."""
    for source in sources:
        local = None if source is None or source.startswith("table:") else local_path(source)
        if source is None or local is None:
            return f"the Arrow engine reads local files; {source} is not one"
        if is_glob(local):
            return f"the Arrow engine reads a file or a directory, not a pattern: {source}"
        if _format(source, args) not in ARROW_FORMATS:
            return f"the Arrow engine reads {', '.join(sorted(ARROW_FORMATS))}, not {_format(source, args)} ({source})"
    return None


def choose(args: argparse.Namespace) -> str:
    """The engine a hash or compare runs on: what --engine says, or for auto, arrow when it can read every source
    and nothing asks for Spark (a --master, a --conf, a table, per-file states), spark otherwise."""
    sources = _sources(args)
    why_not = None
    if args.command == "hash" and (args.table or args.approximate or args.state or args.update_manifest):
        why_not = "--table, --approximate, --state and --update-manifest need the Spark engine"
    tamper_evident = bool(args.secure or args.key_file)
    if tamper_evident and not installed("cryptography"):
        why_not = f"--secure and --key-file on the Arrow engine need AES from cryptography: {install_hint('arrow')}"
    why_not = why_not or arrow_cannot_read(sources, args)
    if args.engine == "arrow":
        return arrow_as_asked(why_not)
    if args.engine == "spark":
        if not installed("pyspark"):
            raise UsageError(f"--engine spark needs pyspark: {install_hint('spark')}")
        return "spark"
    if not installed("pyspark"):
        if why_not:
            raise UsageError(f"{why_not}, and pyspark is not installed ({install_hint('spark')})")
        if not arrow_installed():
            raise UsageError(f"neither engine is installed: {install_hint('arrow')}, or {install_hint('spark')}")
        return "arrow"
    if why_not or tamper_evident:  # e.g. `hash --table NAME`: no PATH for the lines below to look at; the secure and
        return "spark"               # keyed digests: Spark's JVM hashes them faster (the Arrow engine: without Java)
    spark_asked = args.master != "local[*]" or args.conf
    typed = all(_format(s, args) in ARROW_AUTO_FORMATS for s in sources if s is not None)
    manifest = args.command == "hash" and has_manifest(args.path)
    if spark_asked or not typed or manifest or not arrow_installed():
        return "spark"
    return "arrow"


def arrow_fingerprint(source: str, args: argparse.Namespace) -> Tuple[Fingerprint, float]:
    """The Arrow engine's fingerprint of a local file or directory, and the seconds it took."""
    import dsha.arrow  # needs pyarrow and numpy, which choose() has found

    started = time.time()
    fmt = format_of(source, args.format, getattr(args, "force", False))  # the one note on sidecars left out
    path = local_path(source)
    assert path is not None  # choose() gives the Arrow engine local paths only
    columns = None
    if args.columns:
        wanted = [c.strip() for c in args.columns.split(",") if c.strip()]
        columns = resolve_columns(dsha.arrow.column_names(path, format=fmt), wanted, source)
    progress: Optional[Callable[[int], None]] = None
    if not (args.quiet or args.json) and sys.stderr.isatty():  # as Spark's console progress bar: when watched
        def progress(rows: int) -> None:
            print(f"\rdsha: {rows:,} rows hashed ({time.time() - started:.1f} s)", end="", file=sys.stderr,
                  flush=True)
    with step(f"digest {source}"):
        fp = dsha.arrow.fingerprint(path, columns=columns, format=fmt, progress=progress, exclude=excluded(args),
                                    **algorithm_args(args))
        if progress is not None:  # cleared before the step's line
            print("\r\033[K", end="", file=sys.stderr, flush=True)
    return fp, time.time() - started
