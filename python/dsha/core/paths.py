"""Inputs given as paths: local or not, globs, their format (from the path, its files, or a Delta log), how they are
read, and the checks that can be made before Spark starts."""
from __future__ import annotations

import glob
import os
from typing import Dict, List, Optional

from dsha.errors import UsageError

__all__ = ["FORMATS", "check_local", "format_of", "is_glob", "local_path", "reader_options"]

FORMATS = {".parquet": "parquet", ".orc": "orc", ".json": "json", ".jsonl": "json", ".ndjson": "json",
           ".csv": "csv", ".avro": "avro", ".txt": "text", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow"}
_COMPRESSIONS = (".gz", ".bz2", ".zst", ".lz4", ".snappy", ".deflate", ".xz")


def local_path(path: str) -> Optional[str]:
    """The local file system path of ``path``, or None for other file systems (s3a://, hdfs://, ...)."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return None if "://" in path else path


def is_glob(path: str) -> bool:
    return any(c in path for c in "*?[{")


def format_of(path: str, explicit: Optional[str]) -> str:
    """The explicit format, else the one the path or the data files in it suggest (Delta tables by their log),
    else parquet."""
    if explicit:
        return explicit.lower()
    local = local_path(path)
    if local is None or is_glob(local):
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
    for comp in _COMPRESSIONS:
        if name.endswith(comp):
            names.append(name[: -len(comp)])
    return names


def check_local(path: str) -> None:
    """A local path (or glob) that does not exist or cannot be read is a :class:`UsageError`; others pass."""
    local = local_path(path)
    if local is None:
        return
    if is_glob(local):
        if not glob.glob(local):
            raise UsageError(f"no file matches {path}")
        return
    if not os.path.exists(local):
        raise UsageError(f"no such file or directory: {path}")
    if not os.access(local, os.R_OK):
        raise UsageError(f"cannot read {path}: permission denied")


def reader_options(fmt: str) -> Dict[str, str]:
    """The reader options of a format, the same for ``dsha hash`` and the Python API: CSV files have a header."""
    return {"header": "true"} if fmt == "csv" else {}
