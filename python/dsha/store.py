"""A fingerprint store: per named step, the fingerprints of its inputs at its last recorded run.

Both backends keep records append-only and read the latest one per name (largest ``(recorded_ns, id)``), so
concurrent writers never overwrite each other's bytes and every reader agrees on which record is the latest:

- ``DirectoryStore(path)``: a directory of JSON files, ``<root>/<name-slug>/<recorded_ns>-<id>.json``; each file is
  written whole under a temporary name and renamed into place (an atomic step), so a reader never sees half a
  record. The file system is pluggable (``LocalFileSystem``; ``HadoopFileSystem`` for hdfs://, s3a://, ...).
- ``TableStore(spark, "db.t")``: a catalog table of (name, recorded_ns, id, record JSON), appended to.

A record that cannot be read as a dsha record raises ``StoreError``: a step is never taken as unchanged on the
strength of an entry nobody can vouch for.
"""
from __future__ import annotations

import contextlib
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

__all__ = ["FORMAT", "DirectoryStore", "HadoopFileSystem", "InputRecord", "LocalFileSystem", "Record", "Store",
           "StoreError", "TableStore", "open_store"]

FORMAT = "dsha-store/1"
_ENTRY = re.compile(r"^\d{20}-[0-9a-f]{32}\.json$")  # lexical order of entry names = (recorded_ns, id) order


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

    def put(self, record: Record) -> None:
        raise NotImplementedError


class LocalFileSystem:
    """The file operations a ``DirectoryStore`` needs, on the local file system. Another file system plugs in by
    offering the same four methods (``HadoopFileSystem``)."""

    def list(self, directory: str) -> List[str]:
        try:
            return os.listdir(directory)
        except FileNotFoundError:
            return []

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
    any Hadoop path). ``keep`` older records per name are kept besides the latest (history; pruned on put)."""

    def __init__(self, root: str, fs: Any = None, keep: int = 10) -> None:
        local = local_path(root) if fs is None else None  # another file system resolves URIs itself
        self.root = root if local is None else local
        self.fs = fs or LocalFileSystem()
        self.keep = keep

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

    def put(self, record: Record) -> None:
        directory = self._dir(record.name)
        self.fs.write_new(f"{directory}/{record.recorded_ns:020d}-{record.id}.json", record.to_json().encode())
        for old in self._entries(record.name)[: -(self.keep + 1)]:
            self.fs.delete(f"{directory}/{old}")


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

    def put(self, record: Record) -> None:
        (self.spark.createDataFrame([(record.name, record.recorded_ns, record.id, record.to_json())], self.COLUMNS)
         .write.insertInto(self.table))


def open_store(store: Union[str, os.PathLike[str], Store], spark: Optional[SparkSessionLike] = None) -> Store:
    """A ``Store`` from what a user gives: a ``Store``; ``"table:db.t"`` (a ``TableStore``); a local directory or
    ``file:`` URI; any other URI (hdfs://, s3a://) through Hadoop's FileSystem of a classic ``spark``."""
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
        return DirectoryStore(store, fs=HadoopFileSystem(spark))
    return DirectoryStore(store)
