"""A fingerprint store: per named step, the fingerprints of its inputs at its last recorded run.

Both backends keep records append-only and read the latest one per name (largest ``(recorded_ns, id)``), so
concurrent writers never overwrite each other's bytes and every reader agrees on which record is the latest.
``recorded_ns`` is an order, not only a clock: a writer stamps its record after the latest one it finds (its clock,
or one nanosecond after that record when its clock is behind), so a record always comes after every record written
before it began, whatever the writers' clocks say; records of stores written by older versions read as before, and a
new record comes after all of them:

- ``DirectoryStore(path)``: a directory of JSON files, ``<root>/<name-slug>/<recorded_ns>-<id>.json``; each file is
  written whole under a temporary name and renamed into place (an atomic step), so a reader never sees half a
  record. The file system is pluggable (``LocalFileSystem``; ``HadoopFileSystem`` for hdfs://, s3a://, ...). The
  root carries a marker file ``.dsha-store``; ``put`` writes only into a store (a directory with the marker, or one
  an older dsha wrote, or an empty one), or creates one where the root's parent exists, unless ``create=True``.
- ``TableStore(spark, "db.t")``: a catalog table of (name, recorded_ns, id, record JSON), appended to.

A record that cannot be read as a dsha record raises ``StoreError``: a step is never taken as unchanged on the
strength of an entry nobody can vouch for.
"""
from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import json
import os
import re
import time
import uuid
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from dsha.core.fingerprint import Fingerprint
from dsha.core.paths import local_path
from dsha.dependencies import F
from dsha.errors import StoreError

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["FORMAT", "MARKER", "DirectoryStore", "HadoopFileSystem", "InputRecord", "LocalFileSystem", "Record",
           "Store", "StoreError", "TableStore", "open_store"]

FORMAT = "dsha-store/1"
MARKER = ".dsha-store"  # in a DirectoryStore's root: this directory is a store (its text: the format)
_ENTRY = re.compile(r"^\d{20}-[0-9a-f]{32}\.json$")  # lexical order of entry names = (recorded_ns, id) order
_SLUG = re.compile(r"^[A-Za-z0-9._-]*-[0-9a-f]{16}$")  # a step's folder (_slug): what an older dsha's store holds


@dataclass(frozen=True)
class InputRecord:
    """One input's fingerprint, and where it came from.

    ``kind`` is "dataframe", "path" or "table"; ``source`` the path or table name (None for a DataFrame);
    ``files`` an optional JSON-serialisable per-file manifest for paths (an extension point: dsha writes None)."""

    kind: str
    source: Optional[str]
    format: Optional[str]
    fingerprint: Fingerprint
    files: Any = None
    # This run's note that the fingerprint rests on stored per-file states (PathFingerprint.stored_states_note, with
    # "{reread}" for the way to read every file), for people; not recorded, and no part of the comparison.
    stored_states: Optional[str] = field(default=None, compare=False)


@dataclass(frozen=True)
class Record:
    """A step's inputs (by input name) and code version at one recorded run."""

    name: str
    inputs: Dict[str, InputRecord]
    version: Optional[str] = None
    recorded_ns: int = field(default_factory=time.time_ns)
    id: str = field(default_factory=lambda: uuid.uuid4().hex)

    @property
    def recorded_at(self) -> str:
        """When, as ISO 8601 UTC."""
        seconds, rest = divmod(self.recorded_ns, 10**9)
        t = datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).replace(microsecond=rest // 1000)
        return t.isoformat().replace("+00:00", "Z")

    def to_json(self) -> str:
        inputs = {k: {"kind": i.kind, "source": i.source, "format": i.format, "files": i.files,
                      **{f: getattr(i.fingerprint, f) for f in _FINGERPRINT_FIELDS}}
                  for k, i in self.inputs.items()}
        return json.dumps({"format": FORMAT, "name": self.name, "version": self.version,
                           "recorded_at": self.recorded_at, "recorded_ns": self.recorded_ns, "id": self.id,
                           "inputs": inputs}, sort_keys=True)

    @classmethod
    def from_json(cls, text: Any, where: str, name: Optional[str] = None) -> Record:
        """Parses a record; ``StoreError`` naming ``where`` for anything but a well-formed record (of ``name``)."""
        try:
            d = json.loads(text)
        except (ValueError, UnicodeDecodeError) as e:
            raise StoreError(f"corrupt dsha store entry {where}: not JSON ({e})") from None
        if not isinstance(d, dict) or "format" not in d:
            raise StoreError(f"{where} is not a dsha store entry (no \"format\": \"{FORMAT}\")")
        if d["format"] != FORMAT:
            raise StoreError(f"{where} is a store entry of format {d['format']!r}; this dsha reads {FORMAT!r}")
        try:
            if name is not None and d["name"] != name:
                raise StoreError(f"{where} is the entry of {d['name']!r}, not of {name!r}")
            inputs = {str(k): InputRecord(kind=str(i["kind"]), source=i["source"], format=i["format"],
                                          files=i.get("files"),
                                          fingerprint=Fingerprint(**{f: _typed(f, i[f]) for f in _FINGERPRINT_FIELDS}))
                      for k, i in d["inputs"].items()}
            version = d["version"]
            if version is not None and not isinstance(version, str):
                raise TypeError("version is not a string")
            return cls(name=str(d["name"]), inputs=inputs, version=version, recorded_ns=int(d["recorded_ns"]),
                       id=str(d["id"]))
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise StoreError(f"corrupt dsha store entry {where}: {type(e).__name__} {e}") from None


_FINGERPRINT_FIELDS = ("digest", "rows", "schema_digest", "content_sum", "schema", "algorithm")


def _typed(name: str, value: Any) -> Any:
    if name == "rows":
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"rows is {value!r}")
        return value
    if not isinstance(value, str):
        raise TypeError(f"{name} is {value!r}")
    return value


class Store:
    """Where records are kept: ``latest(name)`` and ``put(record)``."""

    def latest(self, name: str) -> Optional[Record]:
        raise NotImplementedError

    def put(self, record: Record) -> Record:
        """Appends ``record``, stamped after the latest record of its name; returns the record as stored."""
        raise NotImplementedError


def _after(record: Record, latest_ns: Optional[int]) -> Record:
    """``record`` stamped after ``latest_ns``: its own time, or one nanosecond after when its clock is behind."""
    if latest_ns is None or record.recorded_ns > latest_ns:
        return record
    return dataclasses.replace(record, recorded_ns=latest_ns + 1)


class LocalFileSystem:
    """The file operations a ``DirectoryStore`` needs, on the local file system. Another file system plugs in by
    offering the same four methods (``HadoopFileSystem``)."""

    def list(self, directory: str) -> List[str]:
        try:
            return os.listdir(directory)
        except FileNotFoundError:
            return []

    def exists(self, path: str) -> bool:
        return os.path.exists(path)

    def read(self, path: str) -> bytes:
        with open(path, "rb") as f:
            return f.read()

    def write_new(self, path: str, data: bytes) -> None:
        """Writes ``path`` all at once: a temporary file in the same directory, flushed, then renamed."""
        directory = os.path.dirname(path)
        os.makedirs(directory, exist_ok=True)
        tmp = os.path.join(directory, f".tmp-{os.getpid()}-{uuid.uuid4().hex}")
        try:
            with open(tmp, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.rename(tmp, path)  # entry names are unique: this never replaces another writer's entry
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def delete(self, path: str) -> None:
        with contextlib.suppress(FileNotFoundError):  # another writer pruned it first
            os.unlink(path)


class HadoopFileSystem:
    """The same operations through Hadoop's FileSystem API of a classic SparkSession's driver (hdfs://, s3a://,
    abfs://, ...): ``create(overwrite=false)`` then ``rename``; on object stores the one PUT of a file is atomic."""

    def __init__(self, spark: SparkSessionLike) -> None:
        jvm = getattr(spark, "_jvm", None)
        if jvm is None:
            raise StoreError("a store on a Hadoop file system needs a classic SparkSession (not Spark Connect); "
                             "use a local directory or a table store")
        self._jvm, self._conf = jvm, spark._jsc.hadoopConfiguration()

    def _path(self, path: str) -> Any:
        p = self._jvm.org.apache.hadoop.fs.Path(path)
        return p, p.getFileSystem(self._conf)

    def list(self, directory: str) -> List[str]:
        p, fs = self._path(directory)
        if not fs.exists(p):
            return []
        return [s.getPath().getName() for s in fs.listStatus(p)]

    def exists(self, path: str) -> bool:
        p, fs = self._path(path)
        return bool(fs.exists(p))

    def read(self, path: str) -> bytes:
        p, fs = self._path(path)
        try:
            stream = fs.open(p)
        except Exception as e:  # Py4J's error: as the local file system says it, for DirectoryStore.latest
            if "FileNotFoundException" in str(e):
                raise FileNotFoundError(path) from None
            raise
        out = self._jvm.java.io.ByteArrayOutputStream()
        self._jvm.org.apache.hadoop.io.IOUtils.copyBytes(stream, out, 65536, True)  # closes the stream
        return bytes(out.toByteArray())

    def write_new(self, path: str, data: bytes) -> None:
        p, fs = self._path(path)
        tmp = self._jvm.org.apache.hadoop.fs.Path(p.getParent(), f".tmp-{os.getpid()}-{uuid.uuid4().hex}")
        out = fs.create(tmp, False)
        try:
            out.write(bytearray(data))
        finally:
            out.close()
        if not fs.rename(tmp, p):
            fs.delete(tmp, False)
            raise StoreError(f"cannot write the store entry {path}")

    def delete(self, path: str) -> None:
        p, fs = self._path(path)
        fs.delete(p, False)


def _slug(name: str) -> str:
    """A directory name for ``name``: readable, and unique through a hash of the exact name."""
    readable = re.sub(r"[^A-Za-z0-9._-]", "_", name)[:60].lstrip(".")
    return f"{readable}-{hashlib.sha256(name.encode('utf-8')).hexdigest()[:16]}"


class DirectoryStore(Store):
    """Records as JSON files under ``root`` (a local path, a ``file:`` URI, or with ``fs=HadoopFileSystem(spark)``
    any Hadoop path). ``keep`` older records per name are kept besides the latest (history; pruned on put).

    ``put`` writes into a store only: a root with the ``.dsha-store`` marker, an older dsha's store (step folders
    only) or an empty directory (both then get the marker), or a root that does not exist yet but whose parent does
    (created). Anything else (a missing parent: an unmounted file system; a non-empty directory that is not a store;
    a file) is a ``StoreError`` unless ``create=True``, which creates the root and its parents, or marks it."""

    def __init__(self, root: str, fs: Any = None, keep: int = 10, create: bool = False) -> None:
        local = local_path(root) if fs is None else None  # another file system resolves URIs itself
        self.root = root if local is None else local
        self.fs = fs or LocalFileSystem()
        self.keep = keep
        self.create = create
        self._ready = False

    def check(self) -> None:
        """A ``StoreError`` when ``put`` would refuse the root (see the class), before anything is computed."""
        problem = self._problem()
        if problem:
            raise StoreError(f"{self.root} {problem}; to make it a dsha store, ask for it (dsha record "
                             f"--create-store, or create=True)")

    def _problem(self) -> Optional[str]:
        if self.create or not hasattr(self.fs, "exists"):  # a plugged-in file system without the check
            return None
        root = self.root.rstrip("/") or "/"
        if not self.fs.exists(root):
            parent = (root.rsplit("/", 1)[0] or "/") if "/" in root.split("://", 1)[-1] else "."
            if "://" in parent and "/" not in parent.split("://", 1)[1]:
                parent += "/"  # a file system's root: hdfs://nn/, s3a://bucket/
            if not self.fs.exists(parent):
                return f"cannot be a store: its parent {parent} does not exist (a file system not mounted?)"
            return None
        try:
            names = self.fs.list(root)
        except OSError as e:
            return f"is not a directory ({type(e).__name__})"
        if MARKER in names:
            return None
        foreign = sorted(n for n in names if not n.startswith(".") and not _SLUG.match(n))
        if foreign:
            return (f"is not a dsha store (no {MARKER} marker; it holds {', '.join(foreign[:3])}"
                    f"{', ...' if len(foreign) > 3 else ''})")
        return None

    def _make_ready(self) -> None:
        """The root made a store, once per instance (checked first)."""
        if self._ready:
            return
        self.check()
        marker = self.root.rstrip("/") + "/" + MARKER
        if hasattr(self.fs, "exists") and not self.fs.exists(marker):
            try:
                self.fs.write_new(marker, (FORMAT + "\n").encode())
            except (OSError, StoreError):
                if not self.fs.exists(marker):  # not another writer's marker, written meanwhile
                    raise
        self._ready = True

    def __repr__(self) -> str:
        return f"DirectoryStore({self.root!r})"

    def _entries(self, name: str) -> List[str]:
        names = self.fs.list(self._dir(name))
        foreign = [n for n in names if not n.startswith(".") and not _ENTRY.match(n)]
        if foreign:
            warnings.warn(f"dsha store {self.root}: ignoring files that are not store entries in "
                          f"{self._dir(name)}: {', '.join(sorted(foreign)[:5])}", stacklevel=3)
        return sorted(n for n in names if _ENTRY.match(n))

    def _dir(self, name: str) -> str:
        return self.root.rstrip("/") + "/" + _slug(name)

    def latest(self, name: str) -> Optional[Record]:
        for _ in range(5):  # a concurrent writer may prune the entry between listing and reading it
            entries = self._entries(name)
            if not entries:
                return None
            where = self._dir(name) + "/" + entries[-1]
            try:
                data = self.fs.read(where)
            except FileNotFoundError:
                continue
            return Record.from_json(data, where, name)
        raise StoreError(f"dsha store {self.root}: the entries of {name!r} keep changing while being read")

    def put(self, record: Record) -> Record:
        self._make_ready()
        directory = self._dir(record.name)
        entries = self._entries(record.name)
        record = _after(record, int(entries[-1][:20]) if entries else None)
        self.fs.write_new(f"{directory}/{record.recorded_ns:020d}-{record.id}.json", record.to_json().encode())
        for old in self._entries(record.name)[: -(self.keep + 1)]:
            self.fs.delete(f"{directory}/{old}")
        return record


class TableStore(Store):
    """Records appended to a catalog table (any format; created as ``CREATE TABLE ... [USING using] [LOCATION
    location]`` when missing). Concurrent writers are as safe as the table format's appends: transactional for
    Delta and Iceberg; plain Parquet tables need one writer at a time. Works over Spark Connect."""

    COLUMNS = "name STRING, recorded_ns BIGINT, id STRING, record STRING"

    def __init__(self, spark: SparkSessionLike, table: str, using: Optional[str] = None,
                 location: Optional[str] = None) -> None:
        self.spark, self.table = spark, table
        if not spark.catalog.tableExists(table):
            ddl = f"CREATE TABLE IF NOT EXISTS {table} ({self.COLUMNS})"
            ddl += f" USING {using}" if using else ""
            ddl += " LOCATION '{}'".format(location.replace("\\", "\\\\").replace("'", "\\'")) if location else ""
            spark.sql(ddl)

    def __repr__(self) -> str:
        return f"TableStore({self.table!r})"

    def latest(self, name: str) -> Optional[Record]:
        rows = (self.spark.table(self.table).where(F.col("name") == F.lit(name))
                .orderBy(F.col("recorded_ns").desc(), F.col("id").desc()).limit(1).collect())
        if not rows:
            return None
        return Record.from_json(rows[0]["record"], f"{self.table} (name {name!r}, id {rows[0]['id']})", name)

    def put(self, record: Record) -> Record:
        latest = (self.spark.table(self.table).where(F.col("name") == F.lit(record.name))
                  .agg(F.max("recorded_ns").alias("ns")).collect()[0]["ns"])
        record = _after(record, None if latest is None else int(latest))
        (self.spark.createDataFrame([(record.name, record.recorded_ns, record.id, record.to_json())], self.COLUMNS)
         .write.insertInto(self.table))
        return record


def open_store(store: Union[str, os.PathLike[str], Store], spark: Optional[SparkSessionLike] = None,
               create: bool = False) -> Store:
    """A ``Store`` from what a user gives: a ``Store``; ``"table:db.t"`` (a ``TableStore``); a local directory or
    ``file:`` URI; any other URI (hdfs://, s3a://) through Hadoop's FileSystem of a classic ``spark``.
    ``create``: a directory store may be created or marked where it is not one yet (``DirectoryStore``)."""
    if isinstance(store, Store):
        return store
    if not isinstance(store, (str, os.PathLike)):
        raise StoreError(f"not a store: {store!r} (give a directory, \"table:NAME\" or a dsha.store.Store)")
    store = os.fspath(store)
    if store.startswith("table:"):
        if spark is None:
            raise StoreError("a table store needs a SparkSession")
        return TableStore(spark, store[len("table:"):])
    if local_path(store) is None:
        if spark is None:
            raise StoreError(f"a store at {store} needs a SparkSession (Hadoop file system)")
        return DirectoryStore(store, fs=HadoopFileSystem(spark), create=create)
    return DirectoryStore(store, create=create)
