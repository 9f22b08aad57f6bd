"""What the command line prints: results (text or JSON), warnings, and errors on one line."""
from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from contextlib import contextmanager
from typing import Iterator, Optional

from dsha.core.fingerprint import Comparison, Fingerprint, PathFingerprint
from dsha.errors import DshaWarning

__all__ = ["dsha_warnings_printed", "hint", "print_compare", "print_hash", "short_error", "stored_states_note"]


@contextmanager
def dsha_warnings_printed() -> Iterator[None]:
    """dsha's warnings of the block, printed as ``dsha: warning: ...`` lines on stderr when it ends."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DshaWarning)
        yield
    for w in caught:
        print(f"dsha: warning: {w.message}", file=sys.stderr)


def stored_states_note(files: Optional[PathFingerprint], fmt: Optional[str]) -> Optional[str]:
    """One line saying that a digest rests on stored per-file states and on the check that chose them (SPEC.md
    §12.3), or None when every file was read."""
    note = None if files is None else files.stored_states_note(fmt)
    return None if note is None else f"dsha: {note}"


def print_hash(args: argparse.Namespace, engine: str, fp: Fingerprint, seconds: float,
               files: Optional[PathFingerprint] = None, fmt: Optional[str] = None) -> None:
    note = stored_states_note(files, fmt)
    if note is not None:
        print(note, file=sys.stderr)
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
        if files.manifest:
            used = f"states from {files.manifest}"
        else:
            used = "cache not used: --no-cache" if getattr(args, "no_cache", False) else "no manifest"
        print(f"files: {files.files_total}, read {files.files_read}, reused {files.files_reused} ({used})",
              file=sys.stderr)


def print_compare(args: argparse.Namespace, engine: str, cmp: Comparison, seconds: float) -> None:
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


# Spark's advice that never applies to dsha, which drops nothing
_NOT_APPLICABLE = re.compile(r"\s*To tolerate the error on drop use DROP VIEW IF EXISTS or DROP TABLE IF EXISTS\.")

_NOT_MESSAGE = ("at ", "JVM stacktrace", "Caused by", "== ", "+- ", ":- ", "Traceback", "File \"")


def short_error(e: BaseException) -> str:
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
    message: list[str] = []
    for line in lines[start:]:
        if message and line.startswith(_NOT_MESSAGE):
            break
        message.append(line)
    one = " ".join(message) if message else type(e).__name__
    one = _NOT_APPLICABLE.sub("", one)
    sqlstate = re.search(r"SQLSTATE: \w+", one)  # what follows Spark's SQLSTATE is a plan, not for users
    if sqlstate:
        one = one[: sqlstate.end()]
    return one if len(one) <= 500 else one[:497] + "..."


def hint(e: BaseException, args: Optional[argparse.Namespace] = None) -> str:
    """What to do about a known error of the command ``args`` ran, appended to its line (or nothing)."""
    text = str(e)
    if "DATA_SOURCE_NOT_FOUND" in text and "delta" in text.lower():
        return delta_hint()
    if args is not None and _table_not_found(text) and _names_a_table(args) and not any(
            kv.replace(" ", "") == "spark.sql.catalogImplementation=hive" for kv in args.conf):
        return (" (a table of a Hive metastore: --conf spark.sql.catalogImplementation=hive, and the metastore's "
                "settings, e.g. --conf spark.hadoop.hive.metastore.uris=thrift://..., unless a hive-site.xml is on "
                "Spark's classpath)")
    return ""


def delta_hint() -> str:
    """The settings a Delta table needs, with the Delta release for the running Spark (python/dsha/_delta_versions)."""
    from dsha._delta_versions import delta_for_spark

    pyspark = sys.modules.get("pyspark")
    version = getattr(pyspark, "__version__", "")
    release = delta_for_spark(version) if version else None
    packages = release.maven_coordinate if release else f"<the delta-spark release for Spark {version or 'x.y'}>"
    return (f" (Delta tables need Delta Lake: --conf spark.jars.packages={packages} "
            "--conf spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension "
            "--conf spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog)")


def _table_not_found(text: str) -> bool:
    return "TABLE_OR_VIEW_NOT_FOUND" in text or "Table or view not found" in text


def _names_a_table(args: argparse.Namespace) -> bool:
    sources = [getattr(args, name, None) for name in ("path", "left", "right")] + list(getattr(args, "inputs", []))
    return bool(getattr(args, "table", None)) or any(s is not None and s.startswith("table:") for s in sources)
