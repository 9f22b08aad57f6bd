"""The command line's Spark session: owned (started here for the command, stopped after it) or borrowed (the
caller's, used as it is and never stopped)."""
from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import warnings
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator, List, Optional

from dsha.cli import processes
from dsha.core.phases import step
from dsha.dependencies import installed, pyspark, pyspark_sql
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
    ``--master``/``--conf`` with dsha's jar, owned: stopped when the block ends, and its JVM ended at once when the
    block is interrupted (KeyboardInterrupt), nothing of it left behind."""
    borrowed = spark if spark is not None else active_session()
    with _python_logs_quiet(args.verbose):
        if borrowed is not None:
            yield borrowed
            return
        with _owned(args) as owned:
            yield owned


@contextmanager
def _owned(args: argparse.Namespace) -> Iterator[SparkSessionLike]:
    before = processes.children()
    scratch = tempfile.mkdtemp(prefix="dsha-spark-")  # the JVM's temporary files: removed however the command ends
    handler = signal.getsignal(signal.SIGINT)
    owned: Optional[SparkSessionLike] = None
    interrupted = False
    try:
        with step("start Spark"), warnings.catch_warnings():
            # Ctrl-C while PySpark builds the SparkContext: its clean-up calls the gateway the interrupted call broke,
            # and warns that the JVM may have crashed; the JVM is ended below
            warnings.filterwarnings("ignore", "Unable to cleanly shutdown Spark JVM process", RuntimeWarning)
            owned = _start(args, scratch)
        if threading.current_thread() is threading.main_thread():
            # PySpark's handler cancels the jobs through the gateway the interrupted call is using: tracebacks, or
            # a hang; a plain KeyboardInterrupt instead, and the JVM ended below
            signal.signal(signal.SIGINT, signal.default_int_handler)
        yield owned
    except KeyboardInterrupt:
        interrupted = True
        with _sigint_ignored():  # a second Ctrl-C does not stop the clean-up half-way
            processes.end(processes.children() - before)
        raise
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, handler)
        if owned is not None and not interrupted:
            owned.stop()
        shutil.rmtree(scratch, ignore_errors=True)


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)


# Python loggers that print what the command's one error line already says: py4j's (a broken connection when a
# call is interrupted; py4j logs some of it on the root logger) and PySpark 4's query-context loggers (a JSON record
# with the JVM's stack for every error). A level on "py4j" holds for its children ("py4j.clientserver", ...).
_NOISY_LOGGERS = ("py4j", "SQLQueryContextLogger", "DataFrameQueryContextLogger")


class _NotFromPy4j(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return f"{os.sep}py4j{os.sep}" not in record.pathname


@contextmanager
def _python_logs_quiet(verbose: bool) -> Iterator[None]:
    """Silences ``_NOISY_LOGGERS`` (and py4j's records on the root logger) for the block, unless ``verbose``."""
    if verbose:
        yield
        return
    loggers = [_logger(name) for name in _NOISY_LOGGERS]
    saved = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL + 1)
    root_filter = _NotFromPy4j()
    logging.getLogger().addFilter(root_filter)
    try:
        yield
    finally:
        logging.getLogger().removeFilter(root_filter)
        for logger, level in zip(loggers, saved):
            logger.setLevel(level)


def _logger(name: str) -> logging.Logger:
    # PySpark logs to its query-context loggers with keyword arguments only its own Logger class takes: such a
    # logger must be made by PySpark (a plain one of the same name would fail there)
    if name.endswith("ContextLogger"):
        try:
            from pyspark.logger import PySparkLogger  # PySpark 4 and later

            return PySparkLogger.getLogger(name)
        except ImportError:
            pass
    return logging.getLogger(name)


def _start(args: argparse.Namespace, scratch: str) -> SparkSessionLike:
    builder = pyspark_sql.SparkSession.builder.master(args.master).appName("dsha")
    # Spark's console progress bar (on stderr) for long jobs, when someone is watching.
    progress = not (args.quiet or args.json) and sys.stderr.isatty()
    builder.config("spark.ui.showConsoleProgress", "true" if progress else "false")
    builder.config("spark.local.dir", scratch)
    for kv in args.conf:
        k, _, v = kv.partition("=")
        builder.config(k, v)
    builder = configure(builder)
    with _submit_args(args, scratch):
        if args.verbose:
            spark = _get_or_create(builder)
        else:
            with _JvmStderrFiltered():
                spark = _get_or_create(builder)
    if not args.verbose:
        spark.sparkContext.setLogLevel("OFF")
    return spark


def _get_or_create(builder: Any) -> SparkSessionLike:
    """``builder.getOrCreate()`` of a classic session, with Ctrl-C a plain KeyboardInterrupt from the moment its
    SparkContext exists. PySpark's SparkContext installs a SIGINT handler that cancels the jobs through the gateway;
    during the SparkSession's construction (a gateway call in flight) that breaks the call into a Py4J error, so the
    command said ``dsha: error: An error occurred while calling None.org.apache.spark.sql.SparkSession`` instead of
    ``dsha: interrupted`` (seen on 3.5.9). So the SparkContext first, from the builder's settings as the builder
    would make it, then the default handler, then the session on that context."""
    options = getattr(builder, "_options", {})
    classic = (options.get("spark.api.mode", "classic") == "classic" and "spark.remote" not in options
               and not os.environ.get("SPARK_REMOTE") and not os.environ.get("SPARK_CONNECT_MODE_ENABLED"))
    if classic and threading.current_thread() is threading.main_thread():
        conf = pyspark.SparkConf()
        for key, value in options.items():
            conf.set(key, value)
        pyspark.SparkContext.getOrCreate(conf)
        signal.signal(signal.SIGINT, signal.default_int_handler)
    return builder.getOrCreate()  # type: ignore[no-any-return]


@contextmanager
def _submit_args(args: argparse.Namespace, scratch: str) -> Iterator[None]:
    """The driver JVM's options, which must be given when PySpark launches it (not through the builder): its
    temporary directory, and its log settings unless --verbose. A PYSPARK_SUBMIT_ARGS of the caller's is kept."""
    if "PYSPARK_SUBMIT_ARGS" in os.environ:
        yield
        return
    options: List[str] = [f"-Djava.io.tmpdir={scratch}"]
    if not args.verbose:
        options.append(f"-Dlog4j2.configurationFile=file:{_LOG_CONF}")
    os.environ["PYSPARK_SUBMIT_ARGS"] = f'--driver-java-options "{" ".join(options)}" pyspark-shell'
    try:
        yield
    finally:
        os.environ.pop("PYSPARK_SUBMIT_ARGS", None)


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
