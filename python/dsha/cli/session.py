"""The command line's Spark session: owned (started here for the command, stopped after it) or borrowed (the
caller's, used as it is and never stopped)."""
from __future__ import annotations

import argparse
import os
import re
import sys
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Iterator, Optional

from dsha.dependencies import installed, pyspark_sql
from dsha.spark.session import configure

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["active_session", "spark_session"]

_LOG_CONF = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "log4j2-cli.properties")

# What the JVM itself prints at start-up, before any logging is set up (e.g. Spark 4.1+ on Java 17: "WARNING: Using
# incubator modules: jdk.incubator.vector"): not for the CLI's users, unless --verbose.
_JVM_NOISE = re.compile(rb"^WARNING: ")


def active_session() -> Optional[SparkSessionLike]:
    """The session already active in this process (classic; or Spark Connect when PySpark runs in Connect mode), or
    None — without starting a JVM."""
    if not installed("pyspark"):
        return None
    try:
        return pyspark_sql.SparkSession.getActiveSession()
    except Exception:
        return None


@contextmanager
def spark_session(args: argparse.Namespace, spark: Optional[SparkSessionLike] = None) -> Iterator[SparkSessionLike]:
    """The session a command runs on: ``spark`` if given, else the process's active session (both borrowed: used
    as they are, never stopped; ``--master`` and ``--conf`` do not apply to them), else a session started from
    ``--master``/``--conf`` with dsha's jar, owned: stopped when the block ends."""
    borrowed = spark if spark is not None else active_session()
    if borrowed is not None:
        yield borrowed
        return
    owned = _start(args)
    try:
        yield owned
    finally:
        owned.stop()


def _start(args: argparse.Namespace) -> SparkSessionLike:
    builder = pyspark_sql.SparkSession.builder.master(args.master).appName("dsha")
    # Spark's console progress bar (on stderr) for long jobs, when someone is watching.
    progress = not (args.quiet or args.json) and sys.stderr.isatty()
    builder.config("spark.ui.showConsoleProgress", "true" if progress else "false")
    if not args.verbose and "PYSPARK_SUBMIT_ARGS" not in os.environ:
        # JVM options must be given when PySpark launches the driver JVM, not through the builder.
        os.environ["PYSPARK_SUBMIT_ARGS"] = (f'--driver-java-options "-Dlog4j2.configurationFile=file:{_LOG_CONF}" '
                                             "pyspark-shell")
    for kv in args.conf:
        k, _, v = kv.partition("=")
        builder.config(k, v)
    builder = configure(builder)
    if args.verbose:
        spark = builder.getOrCreate()
    else:
        with _JvmStderrFiltered():
            spark = builder.getOrCreate()
    if not args.verbose:
        spark.sparkContext.setLogLevel("OFF")
    return spark  # type: ignore[no-any-return]


class _JvmStderrFiltered:
    """While PySpark starts the driver JVM, file descriptor 2 is a pipe, so that the JVM inherits the pipe as its
    stderr for its whole life; a thread copies the pipe to the real stderr (Spark's progress bar, any error output),
    dropping the JVM's start-up warnings. Python's own stderr is restored when the block ends."""

    def __enter__(self) -> _JvmStderrFiltered:
        sys.stderr.flush()
        self._saved = os.dup(2)
        read, write = os.pipe()
        os.dup2(write, 2)
        os.close(write)
        threading.Thread(target=self._pump, args=(read, os.dup(self._saved)), daemon=True,
                         name="dsha-jvm-stderr").start()
        return self

    @staticmethod
    def _pump(read: int, out: int) -> None:
        pending = b""
        while True:
            chunk = os.read(read, 65536)
            if not chunk:
                break
            pending += chunk
            # whole lines (and progress-bar redraws, which end in a carriage return) are forwarded as they come
            cut = max(pending.rfind(b"\n"), pending.rfind(b"\r")) + 1
            if cut:
                lines = re.split(rb"(?<=[\r\n])", pending[:cut])
                os.write(out, b"".join(line for line in lines if not _JVM_NOISE.match(line)))
                pending = pending[cut:]
        if pending:
            os.write(out, pending)

    def __exit__(self, *exc: object) -> None:
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
