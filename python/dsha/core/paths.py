"""Inputs given as paths: local or not, globs, their format (from the path, its files, or a Delta log), how they are
read, and the checks that can be made before Spark starts."""
from __future__ import annotations

import glob
import os
import warnings
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

from dsha.errors import DshaWarning, UsageError

__all__ = ["FORMATS", "HADOOP_GLOB_CHARACTERS", "Detected", "check_local", "data_files", "detect", "format_of",
           "has_glob_characters", "is_glob", "local_path", "reader_options", "spark_path"]

FORMATS = {".parquet": "parquet", ".parq": "parquet", ".pq": "parquet", ".orc": "orc", ".json": "json",
           ".jsonl": "json", ".ndjson": "json",
           ".csv": "csv", ".avro": "avro", ".txt": "text", ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow",
           ".arrows": "arrow"}
_COMPRESSIONS = (".gz", ".bz2", ".zst", ".lz4", ".snappy", ".deflate", ".xz")


def local_path(path: str) -> Optional[str]:
    """The local file system path of ``path``, or None for other file systems (s3a://, hdfs://, ...)."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return None if "://" in path else path


def is_glob(path: str) -> bool:
    """Whether ``path`` is a pattern: it holds ``*``, ``?``, ``[`` or ``{`` and is not a local file or directory of
    that very name (a path that exists is that path, never a pattern)."""
    if not any(c in path for c in "*?[{"):
        return False
    local = local_path(path)
    return local is None or not os.path.lexists(local)


# The characters that make Hadoop read a path as a glob (Spark's SparkHadoopUtil.isGlobPath); Hadoop's GlobPattern
# reads each of them escaped by a backslash as itself.
HADOOP_GLOB_CHARACTERS = "{}[]*?\\"
# Formats whose reader expands globs (Spark's file sources); Delta and Iceberg take their path as it is.
_LITERAL_FORMATS = ("delta", "iceberg")


def has_glob_characters(path: str) -> bool:
    """Whether Hadoop would read ``path`` (a path Spark reads, or a file name) as a glob pattern."""
    return any(c in path for c in HADOOP_GLOB_CHARACTERS)


def spark_path(path: str, fmt: Optional[str] = None) -> str:
    """``path`` as Spark's file reader (format ``fmt``) must be given it to read it: a path that is not a pattern
    (:func:`is_glob`) with its Hadoop glob characters escaped, so that ``x[1].parquet`` is that file and not
    ``x1.parquet``; a pattern, and any path of a Delta or Iceberg reader, as given."""
    if is_glob(path) or (fmt or "").lower() in _LITERAL_FORMATS:
        return path
    return "".join("\\" + c if c in HADOOP_GLOB_CHARACTERS else c for c in path)


# Files that are never data beside data files: read me's, licences, checksums, notes (SPEC.md is not concerned: they
# are not read). Matched on the lower-case name.
SIDECAR_NAMES = ("readme", "license", "licence", "notice", "changelog", "copying")
SIDECAR_SUFFIXES = (".md", ".crc", ".yml", ".yaml", ".xml", ".html", ".htm", ".log", ".pdf", ".sha256", ".sha1",
                    ".md5")
# A minority of files of these formats beside data of a stronger format are sidecars (metadata.json beside Parquet,
# notes.txt beside CSV); CSV is never one. Strength: binary formats 2, CSV and JSON 1, text 0.
_STRENGTH = {"parquet": 2, "orc": 2, "avro": 2, "arrow": 2, "csv": 1, "json": 1, "text": 0}
_SIDECAR_FORMATS = ("json", "text")


@dataclass(frozen=True)
class Detected:
    """What :func:`detect` found: the format, the sidecar files it leaves out (relative paths), and the name
    suffixes of the data files (the read's ``pathGlobFilter`` when there are sidecars)."""

    format: str
    sidecars: Tuple[str, ...] = ()
    suffixes: Tuple[str, ...] = ()

    @property
    def glob_filter(self) -> Optional[str]:
        """The file-name filter that reads the data files only (None when nothing is left out)."""
        if not self.sidecars:
            return None
        return "*" + self.suffixes[0] if len(self.suffixes) == 1 else "*{" + ",".join(self.suffixes) + "}"


def _table_log(local: str) -> Optional[str]:
    """"Delta" or "Iceberg" when the directory holds a table whose log decides which of its files are live."""
    if os.path.isdir(os.path.join(local, "_delta_log")):
        return "Delta"
    metadata = os.path.join(local, "metadata")
    if os.path.isdir(metadata) and any(f.endswith(".metadata.json") for f in os.listdir(metadata)):
        return "Iceberg"
    return None


def data_files(local: str) -> List[str]:
    """Every file Spark reads under a directory (recursively, through partition folders), relative paths, sorted:
    names starting with ``_`` or ``.`` are skipped, files and folders alike, as Spark skips them."""
    out = []
    for root, dirs, files in os.walk(local):
        dirs[:] = sorted(d for d in dirs if not d.startswith(("_", ".")))
        out += [os.path.relpath(os.path.join(root, f), local) for f in sorted(files) if not f.startswith(("_", "."))]
    return out


def _format_and_suffix(name: str) -> Tuple[Optional[str], str]:
    """A file's format from its name (``x.json.gz`` is JSON), and the suffix that says so (as spelled)."""
    lower = name.lower()
    for n in _compression_suffixes(lower):
        for ext, fmt in FORMATS.items():
            if n.endswith(ext):
                return fmt, name[len(n) - len(ext):]
    return None, ""


def _always_sidecar(name: str) -> bool:
    lower = os.path.basename(name).lower()
    return lower.startswith(SIDECAR_NAMES) or lower.endswith(SIDECAR_SUFFIXES)


def detect(path: str, explicit: Optional[str] = None, force: bool = False) -> Detected:
    """The format of an input path, from every data file of a directory (docs/cli.md, "Formats"): the format of the
    data files; a minority of JSON or text files beside a stronger format, and read me's, licences and checksums,
    are sidecars, left out; files of two data formats make the directory mixed, a :class:`UsageError` naming the
    formats and a few files of each. A directory holding a Delta log is "delta"; one holding Iceberg metadata is
    refused (read it as a table). An explicit format over a Delta or Iceberg table's directory is a
    :class:`UsageError` unless ``force``: the table's log decides which files are live. Non-local paths and
    globs: from the name, else parquet."""
    local = local_path(path)
    is_dir = local is not None and not is_glob(local) and os.path.isdir(local)
    table = _table_log(local) if is_dir and local is not None else None
    if explicit:
        fmt = explicit.lower()
        if table and not force and fmt != table.lower():
            raise UsageError(f"{path} is a {table} table: its log decides which files are live, and --format {fmt} "
                             f"would also read files it removed; read it as {table.lower()} (or add --force to "
                             f"read every {fmt} file)")
        return Detected(fmt)
    if table == "Delta":
        return Detected("delta")
    if table == "Iceberg":
        raise UsageError(f"{path} is an Iceberg table: its metadata decides which files are live; read it through "
                         f"its catalog (table:NAME) or with --format iceberg (--format parquet --force reads every "
                         f"file, removed ones included)")
    if not is_dir or local is None:
        named, _ = _format_and_suffix(os.path.basename(path.rstrip("/")))
        return Detected(named or "parquet")
    return _detect_directory(path, data_files(local))


def _detect_directory(path: str, files: List[str]) -> Detected:
    by_format: Dict[str, List[str]] = {}
    suffixes: Dict[str, List[str]] = {}
    unknown, always = [], []
    for f in files:
        fmt, suffix = _format_and_suffix(os.path.basename(f))
        if _always_sidecar(f):
            always.append(f)
        elif fmt is None:
            unknown.append(f)
        else:
            by_format.setdefault(fmt, []).append(f)
            suffixes.setdefault(fmt, []).append(suffix)
    if not by_format:
        return Detected("parquet")  # no file says its format (e.g. part-00000): as Spark's default
    strongest = max(_STRENGTH.get(f, 2) for f in by_format)
    top = sorted(f for f in by_format if _STRENGTH.get(f, 2) == strongest)
    fmt = max(top, key=lambda f: len(by_format[f]))
    sidecars = list(always)
    mixed = {f: names for f, names in by_format.items() if f != fmt}
    if len(top) == 1:
        for other in list(mixed):
            if other in _SIDECAR_FORMATS and len(by_format[other]) <= len(by_format[fmt]):
                sidecars += mixed.pop(other)
    if sidecars and unknown:
        mixed["files without a known extension"] = unknown
    if mixed:
        groups = [(fmt, by_format[fmt]), *sorted(mixed.items())]
        raise UsageError(f"{path} mixes formats: " + "; ".join(
            f"{f} ({len(names)} file{'s' if len(names) > 1 else ''}: {', '.join(names[:3])}"
            f"{', ...' if len(names) > 3 else ''})" for f, names in groups)
            + "; give --format (and a directory of one format)")
    return Detected(fmt, tuple(sorted(sidecars)), tuple(sorted(set(suffixes[fmt]))))


def format_of(path: str, explicit: Optional[str], force: bool = False, note: bool = True) -> str:
    """The explicit format, else the one the path or every data file in it says (:func:`detect`; Delta tables by
    their log), else parquet. Sidecars left out are named in one :class:`DshaWarning` when ``note``."""
    found = detect(path, explicit, force)
    if note and found.sidecars:
        names = ", ".join(found.sidecars[:5]) + (", ..." if len(found.sidecars) > 5 else "")
        warnings.warn(f"{path}: read as {found.format}; not reading {len(found.sidecars)} file"
                      f"{'s' if len(found.sidecars) > 1 else ''} that are not {found.format} data: {names}",
                      DshaWarning, stacklevel=2)
    return found.format


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


def reader_options(fmt: str, path: Optional[str] = None) -> Dict[str, str]:
    """The reader options of a format, the same for ``dsha hash`` and the Python API: CSV files have a header; a
    directory with sidecars (:func:`detect`) is read through a file-name filter that leaves them out."""
    options = {"header": "true"} if fmt == "csv" else {}
    if path is not None:
        try:
            found = detect(path)
        except UsageError:
            return options  # an explicit format over a mixed directory: read as Spark reads it
        if found.format == fmt and found.glob_filter:
            options["pathGlobFilter"] = found.glob_filter
    return options
