"""The `dsha` command: hash a table or compare two, on an embedded local Spark or a cluster.

    dsha hash PATH [--format F] [--columns a,b] [--master URL] [--json] [--engine auto|arrow|spark]
    dsha hash --table NAME
    dsha compare A B           exit 0 equal, 1 different, 2 error
    --engine arrow: dsha.arrow, no Spark and no JVM (local Parquet, ORC, Arrow IPC, CSV, JSON files)
    dsha check|record NAME INPUT... --store S   (cli_store.py)
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import sys
import time
import warnings
from typing import List, Optional

FORMATS = {".parquet": "parquet", ".orc": "orc", ".json": "json", ".jsonl": "json", ".ndjson": "json",
           ".csv": "csv", ".avro": "avro", ".txt": "text", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow"}
EXIT_EQUAL, EXIT_DIFFERENT, EXIT_ERROR = 0, 1, 2
ENGINES = ("auto", "arrow", "spark")
# What the Arrow engine reads (dsha.arrow), and what `--engine auto` gives it: the typed formats, whose column types
# Spark and Arrow read alike (CSV and JSON types are inferred differently by each: arrow only when asked for).
ARROW_FORMATS = {"parquet", "orc", "arrow", "ipc", "feather", "csv", "json"}
ARROW_AUTO_FORMATS = {"parquet", "orc", "arrow", "ipc", "feather"}


class UsageError(Exception):
    """A problem with what the user asked for, reported in one line."""


def version_text() -> str:
    """What ``dsha --version`` prints: dsha's version, the algorithm, the Spark it would run on and the jar it would
    load (without starting Spark)."""
    import dsha
    from dsha._session import jar_path, spark_runtime

    lines = [f"dsha {dsha.__version__}", f"algorithm: {dsha.ALGORITHM}"]
    try:
        spark, scala = spark_runtime()
        lines.append(f"spark: {spark} (Scala {scala})")
    except Exception as e:  # no pyspark installed
        lines.append(f"spark: not found ({e})")
    try:
        jar = jar_path()
        lines.append(f"jar: {jar}" + (" (from DSHA_JAR)" if os.environ.get("DSHA_JAR") else ""))
    except Exception as e:
        lines.append(f"jar: none: {e}")
    return "\n".join(lines)


class _Version(argparse.Action):
    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(version_text())
        parser.exit()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dsha", description="Logical, order-independent digests of tables (Spark).")
    p.add_argument("--version", action=_Version, help="print dsha's version, the algorithm, the Spark version and the "
                                                      "jar in use, and exit")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--format", help="parquet, orc, json, csv, avro, text, delta (default: from the path or its files, else parquet)")
    common.add_argument("--columns", help="comma-separated columns to hash (default: all)")
    common.add_argument("--master", default=os.environ.get("DSHA_MASTER", "local[*]"),
                        help="Spark master (default: local[*], an embedded Spark)")
    common.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="extra Spark setting")
    common.add_argument("--json", action="store_true", help="print the result as JSON")
    common.add_argument("--quiet", action="store_true", help="no progress bar")
    common.add_argument("--verbose", action="store_true", help="show Spark's logs and stack traces")
    sub = p.add_subparsers(dest="command", required=True)
    h = sub.add_parser("hash", parents=[common], help="print the digest of a table")
    h.add_argument("path", nargs="?", help="file or directory (any Hadoop path)")
    h.add_argument("--table", help="a table name instead of a path")
    h.add_argument("--state", metavar="FILE", help="a cache of per-file digest states outside the data: read when it "
                                                   "matches, then rewritten (the data directory is left alone)")
    h.add_argument("--update-manifest", action="store_true",
                   help="write the per-file states into PATH/_dsha/manifest.json (beside the data) for the next run")
    h.add_argument("--no-cache", action="store_true", help="read every file, ignoring any manifest or --state cache")
    h.add_argument("--approximate", action="store_true",
                   help="a fingerprint of file metadata only (dsha-meta-v1: paths, sizes, modification times; no data "
                        "read), not a content digest")
    c = sub.add_parser("compare", parents=[common], help="compare two tables (exit 0 equal, 1 different)")
    c.add_argument("left", help="path (or table:NAME)")
    c.add_argument("right", help="path (or table:NAME)")
    for command in (h, c):
        command.add_argument("--engine", choices=ENGINES, default="auto",
                             help="arrow: dsha.arrow, without Spark or a JVM (local files); spark: an embedded or "
                                  "remote Spark; auto (default): arrow for local Parquet, ORC and Arrow files when "
                                  "no Spark setting, table or per-file state is asked for, else spark")
        command.add_argument("--secure", action="store_true",
                             help="the tamper-evident public digest dsha-secure-v1 (SPEC.md §16.3; slower)")
        command.add_argument("--key-file", metavar="FILE",
                             help="the keyed digest dsha-keyed-v1 (SPEC.md §16.2) under the key in FILE: hex or "
                                  "base64 text, or raw bytes (at least 16). Never give a key on the command line")
        command.add_argument("--key-algorithm", choices=("dsha-keyed-v1", "dsha-keyed-v2"), default=None,
                             help="with --key-file: the keyed algorithm (default dsha-keyed-v1; dsha-keyed-v2, "
                                  "SPEC.md §16.6, is faster: 1.4x dsha against 1.8x)")
    from dsha import cli_diff, cli_store

    cli_diff.add_parser(sub, common)
    cli_store.add_parsers(sub, common)
    return p


def _local(path: str) -> Optional[str]:
    """The local file system path of ``path``, or None for other file systems (s3a://, hdfs://, ...)."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return None if "://" in path else path


def _is_glob(path: str) -> bool:
    return any(c in path for c in "*?[{")


def _format_of(path: str, explicit: Optional[str]) -> str:
    """The explicit format, else the one the path or the data files in it suggest (Delta tables by their log),
    else parquet."""
    if explicit:
        return explicit.lower()
    local = _local(path)
    if local is None or _is_glob(local):
        candidates = [path]
    elif os.path.isdir(os.path.join(local, "_delta_log")):
        return "delta"
    elif os.path.isdir(local):
        candidates = []
        for _, dirs, files in os.walk(local):  # partitioned tables: the data files are in key=value folders
            dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
            candidates = sorted(f for f in files if not f.startswith(("_", ".")))
            if candidates:
                break
    else:
        candidates = [local]
    for name in candidates:
        for suffix in _compression_suffixes(name):
            for ext, fmt in FORMATS.items():
                if suffix.endswith(ext):
                    return fmt
    return "parquet"


def _compression_suffixes(name: str) -> List[str]:
    """``x.json.gz`` is JSON: the name, and the name without a compression suffix."""
    names = [name]
    for comp in (".gz", ".bz2", ".zst", ".lz4", ".snappy", ".deflate", ".xz"):
        if name.endswith(comp):
            names.append(name[: -len(comp)])
    return names


def _check_local(path: str) -> None:
    local = _local(path)
    if local is None:
        return
    if _is_glob(local):
        if not glob.glob(local):
            raise UsageError(f"no file matches {path}")
        return
    if not os.path.exists(local):
        raise UsageError(f"no such file or directory: {path}")
    if not os.access(local, os.R_OK):
        raise UsageError(f"cannot read {path}: permission denied")


# What the JVM itself prints at start-up, before any logging is set up (e.g. Spark 4.1+ on Java 17: "WARNING: Using
# incubator modules: jdk.incubator.vector"): not for the CLI's users, unless --verbose.
_JVM_NOISE = re.compile(rb"^WARNING: ")


class _jvm_stderr_filtered:
    """While PySpark starts the driver JVM, file descriptor 2 is a pipe, so that the JVM inherits the pipe as its
    stderr for its whole life; a thread copies the pipe to the real stderr (Spark's progress bar, any error output),
    dropping the JVM's start-up warnings. Python's own stderr is restored when the block ends."""

    def __enter__(self) -> "_jvm_stderr_filtered":
        import threading

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

    def __exit__(self, *exc) -> bool:
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        return False


def _session(args):
    from pyspark.sql import SparkSession

    import dsha

    builder = SparkSession.builder.master(args.master).appName("dsha")
    # Spark's console progress bar (on stderr) for long jobs, when someone is watching.
    progress = not (args.quiet or args.json) and sys.stderr.isatty()
    builder.config("spark.ui.showConsoleProgress", "true" if progress else "false")
    if not args.verbose and "PYSPARK_SUBMIT_ARGS" not in os.environ:
        # JVM options must be given when PySpark launches the driver JVM, not through the builder.
        log_conf = os.path.join(os.path.dirname(os.path.abspath(__file__)), "log4j2-cli.properties")
        os.environ["PYSPARK_SUBMIT_ARGS"] = f'--driver-java-options "-Dlog4j2.configurationFile=file:{log_conf}" pyspark-shell'
    for kv in args.conf:
        k, _, v = kv.partition("=")
        builder.config(k, v)
    builder = dsha.configure(builder)
    if args.verbose:
        spark = builder.getOrCreate()
    else:
        with _jvm_stderr_filtered():
            spark = builder.getOrCreate()
    if not args.verbose:
        spark.sparkContext.setLogLevel("OFF")
    return spark


def _load(spark, source: str, args, table: Optional[str] = None):
    if table or source.startswith("table:"):
        df = spark.table(table or source[len("table:"):])
    else:
        _check_local(source)
        fmt = _format_of(source, args.format)
        df = spark.read.format(fmt).options(**_reader_options(fmt)).load(source)
    if args.columns:
        wanted = [c.strip() for c in args.columns.split(",") if c.strip()]
        by_lower = {c.lower(): c for c in df.columns}  # Spark resolves names case-insensitively by default
        names = [c if c in df.columns else by_lower.get(c.lower()) for c in wanted]
        missing = [w for w, n in zip(wanted, names) if n is None]
        if missing:
            raise UsageError(f"no column {', '.join(missing)} in {table or source} (columns: {', '.join(df.columns)})")
        df = df.select(*("`" + c.replace("`", "``") + "`" for c in names))
    return df


def _without_columns(args):
    copy = argparse.Namespace(**vars(args))
    copy.columns = None
    return copy


def _reader_options(fmt: str) -> dict:
    return {"header": "true"} if fmt == "csv" else {}


def _fingerprint(spark, source: str, args, table: Optional[str] = None):
    import dsha

    started = time.time()
    fp = dsha.fingerprint(_load(spark, source, args, table), **_algorithm(args))
    return fp, time.time() - started


def _read_key(path: str):
    """The key in a --key-file: its text if it is hex or base64, else its bytes. Errors name the file, never the key."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise UsageError(f"cannot read the key file {path}: {e.strerror}") from None
    try:
        text = data.decode("ascii").strip()
    except UnicodeDecodeError:
        text = None
    if text and re.fullmatch(r"(?:[0-9a-fA-F]{2})+|[A-Za-z0-9+/_-]+={0,2}", text):
        return text
    if len(data) < 16:
        raise UsageError(f"the key file {path} holds {len(data)} bytes; a key needs at least 16 (32 random bytes "
                         "are recommended), as raw bytes, hex or base64")
    return data


def _algorithm(args) -> dict:
    """dsha.fingerprint's algorithm/key arguments for --secure / --key-file."""
    if getattr(args, "key_file", None):
        chosen = getattr(args, "key_algorithm", None)
        return {"key": _read_key(args.key_file), **({"algorithm": chosen} if chosen else {})}
    if getattr(args, "secure", False):
        return {"algorithm": "secure"}
    return {}


def _fingerprint_files(spark, args):
    """``dsha hash PATH``: per-file states from a manifest (``_dsha/`` or ``--state``) where they still match."""
    import dsha

    started = time.time()
    fmt = _format_of(args.path, args.format)
    if fmt == "delta":
        raise UsageError("per-file states (--state, --update-manifest) are not used for Delta tables; "
                         "hash them with --no-cache")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", dsha.DshaWarning)
        r = dsha.fingerprint_path(spark, args.path, fmt, state=args.state, update_manifest=args.update_manifest,
                                  use_cache=not args.no_cache, **_reader_options(fmt))
    for w in caught:
        print(f"dsha: warning: {w.message}", file=sys.stderr)
    return r, time.time() - started


# -- Iceberg tables (issue 18): `dsha hash --table NAME [--state FILE]` -------------------------------------------

def _iceberg_state_allowed(args) -> bool:
    """--state goes with --table (all columns) too: used if the table is an Iceberg table, else a usage error."""
    return bool(args.table) and args.state is not None and not args.update_manifest and not args.columns


def _is_iceberg_hash(spark, args) -> bool:
    """Whether this `dsha hash` is of an Iceberg table (all columns): hashed by ``_iceberg_hash``. --state with
    another table is a usage error."""
    from dsha.iceberg import is_iceberg_table

    if args.table and not args.columns and is_iceberg_table(spark, args.table):
        return True
    if args.table and args.state:
        raise UsageError(f"--state and --update-manifest need a PATH (a directory or a file, not a pattern) and all "
                         f"columns; --state goes with --table only for an Iceberg table, and {args.table} is not one")
    return False


def _iceberg_hash(spark, args):
    """``dsha hash --table NAME`` on an Iceberg table: ``fingerprint_iceberg``, with per-file states from
    --state FILE when given (else every data file is read, once): (PathFingerprint, seconds)."""
    import dsha

    started = time.time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", dsha.DshaWarning)
        r = dsha.fingerprint_iceberg(spark, args.table, state=args.state, use_cache=not args.no_cache)
    for w in caught:
        print(f"dsha: warning: {w.message}", file=sys.stderr)
    return r, time.time() - started


def _uses_file_states(args) -> bool:
    """Plain file paths use per-file states; tables, column subsets and Delta (its own log) are hashed in full."""
    if args.table or args.columns or args.path.startswith("table:") or _is_glob(args.path):
        return False
    return args.state is not None or args.update_manifest or _format_of(args.path, args.format) != "delta"


_NOT_MESSAGE = ("at ", "JVM stacktrace", "Caused by", "== ", "+- ", ":- ", "Traceback", "File \"")


def _short_error(e: BaseException) -> str:
    """The message a user needs from a (possibly JVM) exception, on one line: from Spark's error class on, else
    the cause, without stack frames or plans."""
    text = str(e).strip() or type(e).__name__
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    start = None
    for i, line in enumerate(lines):
        m = re.search(r"\[[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*\].*", line)
        if m:
            lines[i], start = m.group(0), i
            break
    if start is None:
        for i, line in enumerate(lines):
            if "Exception: " in line and not line.startswith("at "):
                lines[i], start = line.split("Exception: ", 1)[1], i
                break
    if start is None:
        start = 0
    message = []
    for line in lines[start:]:
        if message and line.startswith(_NOT_MESSAGE):
            break
        message.append(line)
    one = " ".join(message) if message else type(e).__name__
    sqlstate = re.search(r"SQLSTATE: \w+", one)  # what follows Spark's SQLSTATE is a plan, not for users
    if sqlstate:
        one = one[: sqlstate.end()]
    return one if len(one) <= 500 else one[:497] + "..."


def _hint(e: BaseException) -> str:
    text = str(e)
    if "DATA_SOURCE_NOT_FOUND" in text and "delta" in text.lower():
        return (" (Delta tables need delta-spark: --conf spark.jars.packages=io.delta:delta-spark_2.13:VERSION "
                "--conf spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension)")
    return ""


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _engine(args) -> str:
    """The engine a hash or compare runs on: what --engine says, or for auto, arrow when it can read every source
    and nothing asks for Spark (a --master, a --conf, a table, per-file states), spark otherwise."""
    if args.command not in ("hash", "compare"):
        return "spark"
    sources = [args.left, args.right] if args.command == "compare" else [args.path]
    why_not = None
    if args.command == "hash" and (args.table or args.approximate or args.state or args.update_manifest):
        why_not = "--table, --approximate, --state and --update-manifest need the Spark engine"
    if args.secure or args.key_file:
        why_not = "--secure and --key-file need the Spark engine (the Arrow engine computes dsha-v1)"
    for source in sources:
        if why_not:
            break
        local = None if source is None or source.startswith("table:") else _local(source)
        if local is None:
            why_not = f"the Arrow engine reads local files; {source} is not one"
        elif _is_glob(local):
            why_not = f"the Arrow engine reads a file or a directory, not a pattern: {source}"
        elif _format_of(source, args.format) not in ARROW_FORMATS:
            why_not = (f"the Arrow engine reads {', '.join(sorted(ARROW_FORMATS))}, not "
                       f"{_format_of(source, args.format)} ({source})")
    if args.engine == "arrow":
        if why_not:
            raise UsageError(why_not)
        if not _installed("pyarrow"):
            raise UsageError('--engine arrow needs pyarrow and numpy: pip install "dsha[arrow]"')
        return "arrow"
    if args.engine == "spark":
        if not _installed("pyspark"):
            raise UsageError('--engine spark needs pyspark: pip install "dsha[spark]"')
        return "spark"
    if not _installed("pyspark"):
        if why_not:
            raise UsageError(f'{why_not}, and pyspark is not installed (pip install "dsha[spark]")')
        if not _installed("pyarrow"):
            raise UsageError('neither engine is installed: pip install "dsha[arrow]" or "dsha[spark]"')
        return "arrow"
    if why_not:  # e.g. `hash --table NAME`: no PATH for the lines below to look at
        return "spark"
    spark_asked = args.master != "local[*]" or args.conf
    typed = all(_format_of(source, args.format) in ARROW_AUTO_FORMATS for source in sources)
    has_manifest = args.command == "hash" and os.path.isfile(os.path.join(_local(args.path) or "", "_dsha",
                                                                           "manifest.json"))
    if spark_asked or not typed or has_manifest or not _installed("pyarrow"):
        return "spark"
    return "arrow"


def _arrow_fingerprint(source: str, args):
    import dsha.arrow

    started = time.time()
    fmt = _format_of(source, args.format)
    columns = None
    if args.columns:
        names = dsha.arrow.column_names(_local(source), format=fmt)
        by_lower = {c.lower(): c for c in names}  # as Spark resolves them: case-insensitively
        wanted = [c.strip() for c in args.columns.split(",") if c.strip()]
        columns = [c if c in names else by_lower.get(c.lower()) for c in wanted]
        missing = [w for w, n in zip(wanted, columns) if n is None]
        if missing:
            raise UsageError(f"no column {', '.join(missing)} in {source} (columns: {', '.join(names)})")
    progress = None
    if not (args.quiet or args.json) and sys.stderr.isatty():  # as Spark's console progress bar: when watched
        def progress(rows: int) -> None:
            print(f"\rdsha: {rows:,} rows hashed ({time.time() - started:.1f} s)", end="", file=sys.stderr,
                  flush=True)
    fp = dsha.arrow.fingerprint(_local(source), columns=columns, format=fmt, progress=progress)
    if progress is not None:
        print("\r\033[K", end="", file=sys.stderr, flush=True)
    return fp, time.time() - started


def _report(args, engine: str, fingerprint_of) -> int:
    """hash or compare with ``fingerprint_of(source) -> (Fingerprint, seconds)`` (the Arrow engine)."""
    from dsha.fingerprint import Comparison

    if args.command == "hash":
        fp, seconds = fingerprint_of(args.path)
        _print_hash(args, engine, fp, seconds)
        return EXIT_EQUAL
    started = time.time()
    cmp = Comparison(fingerprint_of(args.left)[0], fingerprint_of(args.right)[0])
    _print_compare(args, engine, cmp, time.time() - started)
    return EXIT_EQUAL if cmp else EXIT_DIFFERENT


def _print_hash(args, engine: str, fp, seconds: float, files=None) -> None:
    if args.json:
        out = {"source": args.table or args.path, "digest": fp.digest, "rows": fp.rows,
               "schema_digest": fp.schema_digest, "schema": fp.schema, "algorithm": fp.algorithm,
               "engine": engine, "seconds": round(seconds, 3)}
        if files is not None:
            out.update(files=files.files_total, files_read=files.files_read, files_reused=files.files_reused,
                       manifest=files.manifest)
        print(json.dumps(out))
        return
    print(fp.digest)
    rows = "unknown (file metadata only)" if fp.rows < 0 else fp.rows
    print(f"rows: {rows}  time: {seconds:.2f} s  algorithm: {fp.algorithm}  engine: {engine}", file=sys.stderr)
    if files is not None:
        used = f"states from {files.manifest}" if files.manifest else "no manifest"
        print(f"files: {files.files_total}, read {files.files_read}, reused {files.files_reused} ({used})",
              file=sys.stderr)


def _print_compare(args, engine: str, cmp, seconds: float) -> None:
    left, right = cmp.left, cmp.right
    if args.json:
        print(json.dumps({"equal": cmp.equal, "reason": cmp.reason, "left": left.digest, "right": right.digest,
                          "left_rows": left.rows, "right_rows": right.rows, "engine": engine,
                          "seconds": round(seconds, 3)}))
    else:
        print(f"{left.digest}  {args.left}")
        print(f"{right.digest}  {args.right}")
        print(cmp.explain())
        print(f"time: {seconds:.2f} s  engine: {engine}", file=sys.stderr)


def _run(args) -> int:
    from dsha import cli_store

    if args.command in cli_store.COMMANDS:
        cli_store.validate(args)
    if args.command == "hash" and not (args.path or args.table):
        raise UsageError("give a PATH or --table NAME")
    if args.command == "hash" and args.approximate and (args.state or args.update_manifest or args.no_cache):
        raise UsageError("--approximate reads no data: it takes no --state, --update-manifest or --no-cache")
    if args.command in ("hash", "compare") and getattr(args, "key_algorithm", None) and not args.key_file:
        raise UsageError("--key-algorithm chooses the keyed digest of --key-file: give both")
    if args.command in ("hash", "compare") and args.secure and args.key_file:
        raise UsageError("--secure and --key-file are two digests: give one")
    if (args.command == "hash" and (args.secure or args.key_file)
            and (args.approximate or args.state or args.update_manifest)):
        raise UsageError("--secure and --key-file hash every row: they take no --approximate, --state or "
                         "--update-manifest")
    if (args.command == "hash" and (args.state or args.update_manifest) and not _uses_file_states(args)
            and not _iceberg_state_allowed(args)):
        raise UsageError("--state and --update-manifest need a PATH (a directory or a file, not a pattern) and "
                         "all columns (no --columns; --table only with --state, for an Iceberg table)")
    sources = [args.path] if args.command == "hash" and not args.table else []
    sources += [args.left, args.right] if args.command in ("compare", "diff") else []
    for source in sources:  # fail fast, before starting Spark
        if not source.startswith("table:"):
            _check_local(source)
    if args.command == "diff":
        from dsha import cli_diff

        cli_diff.validate(args, UsageError)
        spark = _session(args)
        try:  # columns are dsha.diff's to choose (the key stays in)
            return cli_diff.run(args, spark, lambda s, source: _load(s, source, _without_columns(args)))
        finally:
            spark.stop()
    engine = _engine(args)
    if engine == "arrow":
        return _report(args, engine, lambda source: _arrow_fingerprint(source, args))
    spark = _session(args)
    try:
        if args.command in cli_store.COMMANDS:
            return cli_store.run(args, spark)
        import dsha

        if args.command == "hash":
            files = None
            if args.approximate:
                started = time.time()
                if not args.table and not args.columns and _format_of(args.path, args.format) == "delta":
                    fp = dsha.fingerprint_delta(spark, args.path, exact=False).fingerprint
                elif _is_iceberg_hash(spark, args):
                    fp = dsha.fingerprint_iceberg(spark, args.table, exact=False).fingerprint
                else:
                    fp = dsha.fingerprint(_load(spark, args.path, args, args.table), exact=False)
                seconds = time.time() - started
            elif args.secure or args.key_file:
                fp, seconds = _fingerprint(spark, args.path, args, args.table)
            elif _is_iceberg_hash(spark, args):  # Iceberg tables (issue 18)
                files, seconds = _iceberg_hash(spark, args)
                fp = files.fingerprint
            elif _uses_file_states(args):
                files, seconds = _fingerprint_files(spark, args)
                fp = files.fingerprint
            else:
                fp, seconds = _fingerprint(spark, args.path, args, args.table)
            _print_hash(args, engine, fp, seconds, files)
            return EXIT_EQUAL
        started = time.time()
        cmp = dsha.equal(_load(spark, args.left, args), _load(spark, args.right, args), **_algorithm(args))
        _print_compare(args, engine, cmp, time.time() - started)
        return EXIT_EQUAL if cmp else EXIT_DIFFERENT
    finally:
        spark.stop()


def main(argv: Optional[List[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _run(args)
    except UsageError as e:
        print(f"dsha: error: {e}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("dsha: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except Exception as e:  # Spark's errors: one clear line, the trace only on request
        if args.verbose:
            import traceback

            traceback.print_exc()
        print(f"dsha: error: {_short_error(e)}{_hint(e)}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
