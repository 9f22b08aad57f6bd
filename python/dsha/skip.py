"""Skip work whose inputs (and code) have not changed since its last successful, recorded run.

    changes = dsha.changed({"orders": "data/orders", "dim": dsha.Table("db.dim")}, store="state/", name="report")
    with dsha.run_if_changed("report", inputs, store="state/") as run: ...
    @dsha.skip_if_unchanged(name="report", inputs=..., store="state/")

Inputs are a dict ``{input name: input}`` or a list of inputs named by themselves. An input is a DataFrame (only in
a dict: it has no name of its own), a path (``str``, ``os.PathLike`` or ``dsha.Path(path, format)``; the format
inferred as ``dsha hash`` does) or a catalog table (``dsha.Table("db.t")`` or the string ``"table:db.t"``). A list
``["data/orders", "table:db.t"]`` names its inputs as ``dsha check NAME data/orders table:db.t`` does, so the
Python API and the CLI read and write the same records.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import inspect
import json
import os
import tempfile
import textwrap
import time
import warnings
from dataclasses import dataclass
from pathlib import Path as Path_
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from dsha._session import _is_connect
from dsha.delta import fingerprint_delta
from dsha.files import DshaWarning, fingerprint_path
from dsha.iceberg import fingerprint_iceberg, is_iceberg_table
from dsha.fingerprint import Comparison, Fingerprint, fingerprint
from dsha.store import InputRecord, Record, Store, open_store


@dataclass(frozen=True)
class Table:
    """A catalog table as an input (``spark.table(name)``); named ``"table:<name>"`` in a list of inputs."""

    name: str

    @property
    def key(self) -> str:
        return "table:" + self.name


@dataclass(frozen=True)
class Path:
    """Files as an input: a path (any Hadoop path, a glob) and its format (default: inferred as ``dsha hash``
    does, from the path or its files, else parquet)."""

    path: str
    format: Optional[str] = None

    @property
    def key(self) -> str:
        return self.path


def _is_dataframe(x: Any) -> bool:
    return hasattr(x, "sparkSession") and hasattr(x, "agg")  # classic and Spark Connect DataFrames alike


def _as_input(x: Any) -> Any:
    if isinstance(x, (Table, Path)) or _is_dataframe(x):
        return x
    if isinstance(x, (str, os.PathLike)):
        s = os.fspath(x)
        return Table(s[len("table:"):]) if s.startswith("table:") else Path(s)
    raise TypeError(f"not a dsha input: {x!r} (a DataFrame, a path, dsha.Path, dsha.Table or \"table:NAME\")")


def _named(inputs: Any) -> Dict[str, Any]:
    """``{input name: input}`` from a dict, a list or a single input."""
    if isinstance(inputs, dict):
        return {str(k): _as_input(v) for k, v in inputs.items()}
    items = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    named: Dict[str, Any] = {}
    for x in map(_as_input, items):
        if _is_dataframe(x):
            raise TypeError("a DataFrame has no name of its own: give inputs as a dict, {\"orders\": df, ...}")
        named[x.key] = x
    return named


def _fingerprint_path(spark: Any, path: str, format: str, previous: Optional[InputRecord]) -> Tuple[Fingerprint, Any]:
    """The one place where files are fingerprinted: their fingerprint and their per-file states (a manifest,
    SPEC.md §12, or for Delta tables the state cache of §14), which the next run's ``previous`` hands back so that
    only new and changed files are read. Spark Connect sessions are hashed in full (per-file states need the driver
    JVM)."""
    from dsha.cli import _reader_options

    options = _reader_options(format)  # as `dsha hash` reads CSV, so that both agree
    if _is_connect(spark):
        return fingerprint(spark.read.format(format).options(**options).load(path)), None
    if format == "delta":
        return _with_record_cache(previous, lambda cache: fingerprint_delta(spark, path, state=cache))
    return _with_record_cache(previous, lambda cache: fingerprint_path(spark, path, format,
                                                                        state=Path_(cache).as_uri(), **options))


def _with_record_cache(previous: Optional[InputRecord], compute: Callable[[str], Any]) -> Tuple[Fingerprint, Any]:
    """Runs ``compute(cache_file)`` with the per-file states of the previous record in a temporary cache file, and
    returns the fingerprint and the cache as ``compute`` rewrote it (kept in the new record)."""
    with tempfile.TemporaryDirectory(prefix="dsha-store-") as d:
        cache = os.path.join(d, "files.json")
        if previous is not None and isinstance(previous.files, dict):
            with open(cache, "w", encoding="utf-8") as f:
                json.dump(previous.files, f)
        with warnings.catch_warnings():  # a stale or foreign cache is simply not used: the record is replaced
            warnings.simplefilter("ignore", DshaWarning)
            r = compute(cache)
        with open(cache, encoding="utf-8") as f:
            return r.fingerprint, json.load(f)


def _fingerprint_iceberg_table(spark: Any, name: str, previous: Optional[InputRecord]) -> Tuple[Fingerprint, Any]:
    """An Iceberg table's fingerprint and its state cache (SPEC.md §15), which the next run's ``previous`` hands
    back, so that an unchanged or compacted table is confirmed from its metadata alone."""
    return _with_record_cache(previous, lambda cache: fingerprint_iceberg(spark, name, state=cache))


def _fingerprint_input(spark: Any, x: Any, previous: Optional[InputRecord], exact: bool = True) -> InputRecord:
    if _is_dataframe(x):
        return InputRecord("dataframe", None, None, fingerprint(x, exact=exact))
    if isinstance(x, Table):
        # Iceberg tables (issue 18): per-file states kept in the record, as for Delta paths (SPEC.md §15)
        if not _is_connect(_need(spark, x.key)) and is_iceberg_table(spark, x.name):
            if not exact:  # from the snapshots: compaction keeps it
                return InputRecord("table", x.name, None, fingerprint_iceberg(spark, x.name, exact=False).fingerprint)
            fp, files = _fingerprint_iceberg_table(spark, x.name, previous)
            return InputRecord("table", x.name, None, fp, files)
        return InputRecord("table", x.name, None, fingerprint(_need(spark, x.key).table(x.name), exact=exact))
    from dsha.cli import _check_local, _format_of, _reader_options

    _check_local(x.path)
    fmt = _format_of(x.path, x.format)
    if not exact and fmt == "delta":  # from the log: layout-only commits (OPTIMIZE) keep it
        return InputRecord("path", x.path, fmt, fingerprint_delta(_need(spark, x.path), x.path, exact=False).fingerprint)
    if not exact:
        df = _need(spark, x.path).read.format(fmt).options(**_reader_options(fmt)).load(x.path)
        return InputRecord("path", x.path, fmt, fingerprint(df, exact=False))
    fp, files = _fingerprint_path(_need(spark, x.path), x.path, fmt, previous)
    return InputRecord("path", x.path, fmt, fp, files)


def _need(spark: Any, what: str) -> Any:
    if spark is None:
        raise ValueError(f"no active SparkSession to read {what}: pass spark=")
    return spark


def _session(spark: Any, inputs: Dict[str, Any]) -> Any:
    if spark is not None:
        return spark
    for x in inputs.values():
        if _is_dataframe(x):
            return x.sparkSession
    from pyspark.sql import SparkSession

    return SparkSession.getActiveSession()


@dataclass(frozen=True)
class Change:
    """What changed: ``input`` (None for the step as a whole) and ``what``: "never recorded", "code version",
    "new input", "input removed", "algorithm", "schema", "row count" or "content"; ``detail`` for people."""

    input: Optional[str]
    what: str
    detail: str

    def __str__(self) -> str:
        return f"{self.input}: {self.what}: {self.detail}" if self.input else f"{self.what}: {self.detail}"


def _compare(previous: Optional[Record], current: Record) -> List[Change]:
    if previous is None:
        return [Change(None, "never recorded", f"no record of {current.name!r} in the store")]
    out = []
    if previous.version != current.version:
        out.append(Change(None, "code version", f"{previous.version} -> {current.version}"))
    for key, now in current.inputs.items():
        before = previous.inputs.get(key)
        if before is None:
            out.append(Change(key, "new input", f"{now.fingerprint.rows} rows"))
        elif before.fingerprint.algorithm != now.fingerprint.algorithm:
            out.append(Change(key, "algorithm", f"{before.fingerprint.algorithm} -> {now.fingerprint.algorithm}"))
        elif before.fingerprint.digest != now.fingerprint.digest:
            a, b = before.fingerprint, now.fingerprint
            reason = Comparison(a, b).reason
            detail = {"schema": f"{a.schema} -> {b.schema}", "row count": f"{a.rows} -> {b.rows} rows"}.get(
                reason, f"same schema and row count ({b.rows}), other rows")
            out.append(Change(key, reason, detail))
    out += [Change(key, "input removed", "not among the inputs any more")
            for key in previous.inputs if key not in current.inputs]
    return out


class Changes:
    """The result of ``dsha.changed``: truthy when the step must run. Iterating gives each ``Change``;
    ``inputs`` the names of the inputs that are new or changed; ``record()`` records the fingerprints taken."""

    def __init__(self, previous: Optional[Record], current: Record, store: Store) -> None:
        self.previous, self.current, self.store = previous, current, store
        self.items = _compare(previous, current)

    def __bool__(self) -> bool:
        return bool(self.items)

    def __iter__(self) -> Iterator[Change]:
        return iter(self.items)

    @property
    def inputs(self) -> List[str]:
        if self.previous is None:
            return list(self.current.inputs)
        return [c.input for c in self.items if c.input is not None and c.what != "input removed"]

    def explain(self) -> str:
        if not self.items:
            return f"unchanged since {self.previous.recorded_at}" if self.previous else "unchanged"
        return "\n".join(str(c) for c in self.items)

    def record(self) -> Record:
        """Records the fingerprints taken by ``changed`` (not new ones: an input that changed while the step ran
        shows as changed next time), stamped now, so that the latest write wins."""
        record = dataclasses.replace(self.current, recorded_ns=time.time_ns())
        self.store.put(record)
        return record


def changed(inputs: Any, *, store: Any, name: str, version: Optional[str] = None, spark: Any = None,
            exact: bool = True) -> Changes:
    """What changed in ``inputs`` (and the code ``version``) since the last record of step ``name`` in ``store``
    (a directory, ``"table:db.t"`` or a ``dsha.store.Store``). Fingerprints each input once (one Spark job each).
    A corrupt or foreign store entry raises ``dsha.StoreError``; it is never taken as "unchanged"."""
    named = _named(inputs)
    spark = _session(spark, named)
    st = open_store(store, spark)
    previous = st.latest(name)  # before any Spark job: a bad store fails fast
    before = previous.inputs if previous else {}
    current = Record(name, {k: _fingerprint_input(spark, x, before.get(k), exact) for k, x in named.items()},
                     version)
    return Changes(previous, current, st)


def record(inputs: Any, *, store: Any, name: str, version: Optional[str] = None, spark: Any = None,
           exact: bool = True) -> Record:
    """Records the current fingerprints of ``inputs`` as step ``name``'s last run (what ``dsha record`` does)."""
    return changed(inputs, store=store, name=name, version=version, spark=spark, exact=exact).record()


class _Skipped(Exception):
    def __init__(self, run: "run_if_changed") -> None:
        super().__init__("skipped")
        self.run = run


class run_if_changed:
    """A block that records its inputs' fingerprints when it ends without an exception and they had changed::

        with dsha.run_if_changed("report", {"orders": "data/orders"}, store="state/") as run:
            if not run.should_run:
                run.skip()          # leaves the block now; nothing is recorded
            build_report()          # an exception here: nothing is recorded, the next run runs again

    ``run.changes`` says what changed. ``run.skip()`` leaves the block at once without recording, whether or not
    anything changed."""

    def __init__(self, name: str, inputs: Any, *, store: Any, version: Optional[str] = None, spark: Any = None):
        self.name, self.inputs, self.store, self.version, self.spark = name, inputs, store, version, spark
        self.changes: Optional[Changes] = None
        self.recorded: Optional[Record] = None

    def __enter__(self) -> "run_if_changed":
        self.changes = changed(self.inputs, store=self.store, name=self.name, version=self.version, spark=self.spark)
        return self

    @property
    def should_run(self) -> bool:
        return bool(self.changes)

    def skip(self) -> None:
        raise _Skipped(self)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type is None and self.should_run:
            self.recorded = self.changes.record()
        return isinstance(exc, _Skipped) and exc.run is self


def skip_if_unchanged(name: Optional[str] = None, inputs: Any = None, store: Any = None,
                      version: Optional[str] = None, spark: Any = None) -> Callable[[Callable], Callable]:
    """Runs the decorated function only when its inputs or its code changed since its last successful run;
    a skipped call returns None::

        @dsha.skip_if_unchanged(name="report", inputs={"orders": "data/orders"}, store="state/")
        def build_report(): ...

    ``inputs`` are fixed, or a function of the call's arguments (``inputs=lambda df: {"events": df}``); the
    arguments themselves are not compared. ``name`` defaults to the function's module and qualified name. The code
    version is ``version`` when given, else ``code_version(func)``: a digest of the function's own source that
    ignores comments, docstrings, formatting and decorators, but not the functions it calls (bump ``version=``
    for those). Recording happens only when the function returns without an exception."""
    if inputs is None or store is None:
        raise TypeError("skip_if_unchanged needs inputs= and store=")

    def decorate(func: Callable) -> Callable:
        step = name or f"{func.__module__}.{func.__qualname__}"
        code = version if version is not None else "code:" + code_version(func)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            named = inputs(*args, **kwargs) if callable(inputs) else inputs
            with run_if_changed(step, named, store=store, version=code, spark=spark) as run:
                if not run.should_run:
                    return None
                return func(*args, **kwargs)

        wrapper.code_version = code  # type: ignore[attr-defined]
        return wrapper

    return decorate


def code_version(func: Callable) -> str:
    """A digest of ``func``'s source as Python reads it (its syntax tree), without docstrings and decorators: the
    same across comments, docstrings and formatting; another one for any change of what the code says."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError) as e:
        raise ValueError(f"cannot read the source of {func!r} ({type(e).__name__}: {e}): pass version=") from None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            node.decorator_list = []
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = node.body[1:] or [ast.Pass()]
    return hashlib.sha256(_canonical(tree).encode("utf-8")).hexdigest()[:32]


def _canonical(node: Any) -> str:
    """``ast.dump`` without empty fields, so that Python versions that add (empty) fields give the same text."""
    if isinstance(node, ast.AST):
        fields = [f"{k}={_canonical(v)}" for k, v in ast.iter_fields(node)
                  if v is not None and v != [] and k != "type_comment"]
        return f"{type(node).__name__}({','.join(fields)})"
    if isinstance(node, list):
        return "[" + ",".join(_canonical(x) for x in node) + "]"
    return repr(node)
