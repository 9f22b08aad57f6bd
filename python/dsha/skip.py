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

import dataclasses
import functools
import json
import os
import tempfile
import time
import warnings
from dataclasses import dataclass
from pathlib import Path as LocalPath
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Mapping, Optional, TypeVar, Union

from dsha.core.code_version import code_version
from dsha.core.fingerprint import Comparison
from dsha.core.lineage import emit_recorded
from dsha.core.phases import step
from dsha.dependencies import pyspark_sql
from dsha.errors import DshaWarning
from dsha.inputs import Input, Path, Table, as_input, fingerprint_input, is_dataframe
from dsha.store import DirectoryStore, InputRecord, Record, Store, open_store

if TYPE_CHECKING:
    from dsha.spark.types import SparkSessionLike

__all__ = ["Change", "Changes", "Path", "Table", "changed", "code_version", "record", "run_if_changed",
           "skip_if_unchanged"]

R = TypeVar("R")
# A step's inputs: {input name: input}, a list of inputs named by themselves, or one input.
Inputs = Union[Mapping[str, Any], List[Any], Any]
StoreLike = Union[str, "os.PathLike[str]", Store]


def _named(inputs: Inputs) -> Dict[str, Input]:
    """``{input name: input}`` from a dict, a list or a single input."""
    if isinstance(inputs, dict):
        return {str(k): as_input(v) for k, v in inputs.items()}
    items = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    named: Dict[str, Input] = {}
    for x in map(as_input, items):
        if isinstance(x, (Table, Path)):
            named[x.key] = x
        else:
            raise TypeError("a DataFrame has no name of its own: give inputs as a dict, {\"orders\": df, ...}")
    return named


def _fingerprint_input(spark: Optional[SparkSessionLike], x: Input, previous: Optional[InputRecord],
                       exact: bool = True, use_cache: bool = True) -> InputRecord:
    """An input's record. Per-file states (a manifest of files, SPEC.md §12; the state cache of a Delta or Iceberg
    table, §14, §15) are kept in the record, which the next run's ``previous`` hands back, so that only new and
    changed files are read; ``use_cache=False`` reads every file (the record's states and any manifest unused)."""
    if not isinstance(x, (Table, Path)) or not exact:
        r = fingerprint_input(spark, x, exact=exact)
        return InputRecord(r.kind, r.source, r.format, r.fingerprint)
    with tempfile.TemporaryDirectory(prefix="dsha-store-") as d:
        cache = os.path.join(d, "files.json")
        if previous is not None and isinstance(previous.files, dict):
            with open(cache, "w", encoding="utf-8") as f:
                json.dump(previous.files, f)
        with warnings.catch_warnings():  # a stale or foreign cache is simply not used: the record is replaced
            warnings.simplefilter("ignore", DshaWarning)
            r = fingerprint_input(spark, x, state=LocalPath(cache), use_cache=use_cache)
        files = None
        if r.files is not None:
            with open(cache, encoding="utf-8") as f:
                files = json.load(f)
        note = None if r.files is None else r.files.stored_states_note(r.format, "the last record", "{reread}")
        return InputRecord(r.kind, r.source, r.format, r.fingerprint, files, note)


def _session(spark: Optional[SparkSessionLike], inputs: Dict[str, Input]) -> Optional[SparkSessionLike]:
    if spark is not None:
        return spark
    for x in inputs.values():
        if is_dataframe(x):
            return x.sparkSession  # type: ignore[union-attr]
    return pyspark_sql.SparkSession.getActiveSession()


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
            reason = Comparison(a, b).reason or "content"
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
        """The changes, one per line; for none, "unchanged", and a line for each input whose fingerprint rests on
        stored per-file states (``use_cache=False`` reads every file)."""
        if not self.items:
            unchanged = f"unchanged since {self.previous.recorded_at}" if self.previous else "unchanged"
            stored = [f"{k}: " + i.stored_states.format(reread="use_cache=False")
                      for k, i in self.current.inputs.items() if i.stored_states]
            return "\n".join([unchanged, *stored])
        return "\n".join(str(c) for c in self.items)

    def _repr_html_(self) -> str:
        """The changes in a notebook: whether the step must run, and each change."""
        from dsha.core.diff_html import changes_html

        return changes_html(self)

    def record(self) -> Record:
        """Records the fingerprints taken by ``changed`` (not new ones: an input that changed while the step ran
        shows as changed next time), stamped now, or just after the store's latest record when this clock is
        behind it: the latest write wins, whatever the writers' clocks say. With an OpenLineage client configured,
        emits the record's inputs and their ``dsha`` facets (``dsha.core.lineage``)."""
        record = dataclasses.replace(self.current, recorded_ns=time.time_ns())
        with step("write the record to the store"):
            recorded = self.store.put(record) or record
        emit_recorded(recorded.name, {k: (i.kind, i.source, i.fingerprint) for k, i in recorded.inputs.items()})
        return recorded


def changed(inputs: Inputs, *, store: StoreLike, name: str, version: Optional[str] = None,
            spark: Optional[SparkSessionLike] = None,
            exact: bool = True, create_store: bool = False, use_cache: bool = True) -> Changes:
    """What changed in ``inputs`` (and the code ``version``) since the last record of step ``name`` in ``store``
    (a directory, ``"table:db.t"`` or a ``dsha.store.Store``). Fingerprints each input once (one Spark job each).
    A corrupt or foreign store entry raises ``dsha.StoreError``; it is never taken as "unchanged". Recording
    (``.record()``) into a directory that is not a store (``dsha.store.DirectoryStore``) raises ``StoreError``
    unless ``create_store=True``. Paths and tables are digested from per-file states where their files are unchanged
    (the last record's, or a manifest beside the files: SPEC.md §12.3); each input's ``stored_states`` says so, and
    ``use_cache=False`` reads every file."""
    named = _named(inputs)
    spark = _session(spark, named)
    st = open_store(store, spark, create=create_store)
    with step("read the store's last record"):
        previous = st.latest(name)  # before any Spark job: a bad store fails fast
    before = previous.inputs if previous else {}
    current = Record(name, {k: _fingerprint_input(spark, x, before.get(k), exact, use_cache)
                            for k, x in named.items()}, version)
    return Changes(previous, current, st)


def record(inputs: Inputs, *, store: StoreLike, name: str, version: Optional[str] = None,
           spark: Optional[SparkSessionLike] = None,
           exact: bool = True, create_store: bool = False, use_cache: bool = True) -> Record:
    """Records the current fingerprints of ``inputs`` as step ``name``'s last run (what ``dsha record`` does).
    A directory that is not a store is a ``StoreError`` (before any input is read) unless ``create_store=True``."""
    st = open_store(store, spark, create=create_store)
    if isinstance(st, DirectoryStore):
        st.check()
    return changed(inputs, store=st, name=name, version=version, spark=spark, exact=exact,
                   use_cache=use_cache).record()


class _Skipped(Exception):
    def __init__(self, run: run_if_changed) -> None:
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

    def __init__(self, name: str, inputs: Inputs, *, store: StoreLike, version: Optional[str] = None,
                 spark: Optional[SparkSessionLike] = None):
        self.name, self.inputs, self.store, self.version, self.spark = name, inputs, store, version, spark
        self.changes: Optional[Changes] = None
        self.recorded: Optional[Record] = None

    def __enter__(self) -> run_if_changed:
        self.changes = changed(self.inputs, store=self.store, name=self.name, version=self.version, spark=self.spark)
        if self.changes and isinstance(self.changes.store, DirectoryStore):
            self.changes.store.check()  # a store it could not record into: an error before the step runs
        return self

    @property
    def should_run(self) -> bool:
        return bool(self.changes)

    def skip(self) -> None:
        raise _Skipped(self)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if exc_type is None and self.changes is not None and self.should_run:
            self.recorded = self.changes.record()
        return isinstance(exc, _Skipped) and exc.run is self


def skip_if_unchanged(name: Optional[str] = None, inputs: Optional[Union[Inputs, Callable[..., Inputs]]] = None,
                      store: Optional[StoreLike] = None, version: Optional[str] = None,
                      spark: Optional[SparkSessionLike] = None
                      ) -> Callable[[Callable[..., R]], Callable[..., Optional[R]]]:
    """Runs the decorated function only when its inputs or its code changed since its last successful run;
    a skipped call returns None::

        @dsha.skip_if_unchanged(name="report", inputs={"orders": "data/orders"}, store="state/")
        def build_report(): ...

    ``inputs`` are fixed, or a function of the call's arguments (``inputs=lambda df: {"events": df}``); the
    arguments themselves are not compared. ``name`` defaults to the function's module and qualified name. The code
    version is ``version`` when given, else ``code_version(func)``: a digest of the function's source and of the
    project's own functions, classes and module-level constants it reaches (transitively), with installed packages
    by their version and SQL given to ``.sql(...)`` in a normal form; comments, docstrings, formatting and the
    function's own decorators do not count. Where a source cannot be read it raises ValueError: pass ``version=``.
    Recording happens only when the function returns without an exception."""
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
