"""The incremental engine of table formats (Delta, SPEC.md §14; Iceberg, §15): a unit is a set of files whose rows
together have one state; a rewrite that only moved rows (OPTIMIZE, a replace snapshot) gives its new files the merged
state of the units it removed (a group). A version's digest merges the states of a disjoint cover of its files by
known units with the states of the files read; the units are kept between calls in a JSON cache file outside the
table, whose layout both formats share."""
from __future__ import annotations

import base64
import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Callable, Dict, FrozenSet, Generic, Hashable, Iterable, List, Mapping, Optional, Tuple, TypeVar

from dsha.core.fingerprint import Fingerprint, PathFingerprint
from dsha.core.states import merge, parse
from dsha.errors import StateError, warn

__all__ = ["CACHE_VERSION", "CacheFormat", "Cover", "Groups", "Unit", "load_cache", "replaced_state", "result",
           "save_cache"]

K = TypeVar("K", bound=Hashable)

CACHE_VERSION = 1


class Unit(Generic[K]):
    """Files whose rows together have ``state`` (None: no rows): one file, or the group of a rewrite."""

    __slots__ = ("keys", "state")

    def __init__(self, keys: FrozenSet[K], state: Optional[bytes]):
        self.keys, self.state = keys, state


def replaced_state(removed: Iterable[K], by_key: Mapping[K, Unit[K]]) -> Tuple[bool, Optional[bytes]]:
    """(True, the merged state) when the removed files are exactly covered by known units lying wholly among them;
    (False, None) otherwise (then the rewrite's new files must be read)."""
    rset = set(removed)
    cover: Dict[int, Unit[K]] = {}
    for k in rset:
        u = by_key.get(k)
        if u is None or not u.keys <= rset:
            return False, None
        cover[id(u)] = u
    if sum(len(u.keys) for u in cover.values()) != len(rset):
        return False, None
    states = [u.state for u in cover.values() if u.state is not None]
    return True, merge(states) if states else None


class Groups(Generic[K]):
    """The groups of a history of rewrites, oldest first: ``add(added, removed)`` for each rewrite (per partition)
    gives the added files the merged state of the removed ones when known units cover them exactly (and later
    rewrites may build on that group); ``new`` lists the groups made."""

    def __init__(self, units: Iterable[Unit[K]]) -> None:
        self.by_key: Dict[K, Unit[K]] = {k: u for u in units for k in u.keys}
        self.new: List[Unit[K]] = []

    def add(self, added: Iterable[K], removed: List[K]) -> None:
        keys = frozenset(added) - set(removed)
        if not keys or not removed:
            return
        ok, state = replaced_state(removed, self.by_key)
        if not ok:
            return
        group = Unit(keys, state)
        self.new.append(group)
        for k in keys:
            self.by_key[k] = group


@dataclass
class Cover(Generic[K]):
    """A disjoint cover of a version's files by cached units, largest first (``used``, covering ``covered``), and the
    files no unit covers (``to_read``), in the version's order."""

    used: List[Unit[K]]
    covered: Dict[K, Unit[K]]
    to_read: List[K]

    @classmethod
    def of(cls, units: Iterable[Unit[K]], current: Iterable[K]) -> Cover[K]:
        files = list(current)
        present = set(files)
        covered: Dict[K, Unit[K]] = {}
        used: List[Unit[K]] = []
        for u in sorted(units, key=lambda u: -len(u.keys)):
            if u.keys and all(k in present and k not in covered for k in u.keys):
                used.append(u)
                for k in u.keys:
                    covered[k] = u
        return cls(used, covered, [k for k in files if k not in covered])

    def read(self, states: Callable[[List[K]], Mapping[K, Optional[bytes]]]) -> List[Unit[K]]:
        """One unit per file to read, with its state from ``states(files)`` (nothing is asked when none is)."""
        if not self.to_read:
            return []
        got = states(self.to_read)
        return [Unit(frozenset([k]), got[k]) for k in self.to_read]


def result(cover: Cover[K], fresh: List[Unit[K]], empty_state: Callable[[], bytes], files_total: int,
           state_file: Optional[str], warnings: List[str]) -> PathFingerprint:
    """The fingerprint of the covering units and the files read (their merged states; ``empty_state()`` for no
    rows), with how it was computed; ``warnings`` are issued as :class:`DshaWarning`."""
    states = [u.state for u in cover.used + fresh if u.state is not None]
    total = merge(states) if states else empty_state()
    return PathFingerprint(fingerprint=Fingerprint.from_state(total), files_total=files_total,
                           files_read=len(cover.to_read), files_reused=len(cover.covered),
                           manifest=state_file if cover.used else None, warnings=warn(warnings))


@dataclass(frozen=True)
class CacheFormat(Generic[K]):
    """What tells one format's cache file apart (SPEC.md §14, §15): its ``format`` name, the field of the table's
    identity and how messages name it, the field of the version it has processed, and a file key in JSON."""

    name: str
    caller: str  # "dsha.fingerprint_delta", in messages
    table_kind: str  # "Delta table"
    id_field: str  # "table_id"
    id_label: str  # "id"
    version_field: str  # "log_version"
    encode: Callable[[K], List[Any]]
    decode: Callable[[Any], K]


def load_cache(fmt: CacheFormat[K], file: Optional[str], table_id: str, schema: str, warnings: List[str]
               ) -> Tuple[Optional[Dict[str, Any]], List[Unit[K]], Optional[int]]:
    """(the cache document, its units of the read schema, the version it has processed); (None, [], None) when
    there is no cache file or it cannot be used (a warning says why, and it is replaced when saved)."""
    if not file or not os.path.exists(file):
        return None, [], None
    try:
        with open(file, encoding="utf-8") as fh:
            doc = json.load(fh)
        if not isinstance(doc, dict) or doc.get("format") != fmt.name or doc.get("version") != CACHE_VERSION:
            raise ValueError(f"not a {fmt.name} v{CACHE_VERSION} file")
        if doc.get(fmt.id_field) != table_id:
            warnings.append(f"{fmt.caller}: the state file {file} is for another {fmt.table_kind} "
                            f"({fmt.id_label} {doc.get(fmt.id_field)}, this one {table_id}): ignored, and replaced")
            return None, [], None
        units = []
        for u in doc.get("schemas", {}).get(schema, []):
            s = base64.b64decode(u["state"]) if u.get("state") else None
            if s is not None:
                parse(s)
            units.append(Unit(frozenset(fmt.decode(k) for k in u["files"]), s))
        version = doc.get(fmt.version_field)
        return doc, units, int(version) if version is not None else None
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError, StateError) as e:
        warnings.append(f"{fmt.caller}: the state file {file} is unreadable ({e}): ignored")
        return None, [], None


def save_cache(fmt: CacheFormat[K], file: str, header: Dict[str, Any], schema: str, units: Iterable[Unit[K]]
               ) -> None:
    """Writes the cache file whole (a temporary file renamed over it): ``header`` (the table, its identity, the
    version processed, ...) and the units of ``schema``, keeping the units of the file's other schemas (time travel
    across a schema change)."""
    doc: Dict[str, Any] = {"format": fmt.name, "version": CACHE_VERSION, "algorithm": "dsha-v1", **header,
                           "schemas": {}}
    if os.path.exists(file):
        try:
            with open(file, encoding="utf-8") as fh:
                old = json.load(fh)
            if isinstance(old, dict) and old.get("format") == fmt.name and old.get(fmt.id_field) == doc[fmt.id_field]:
                doc["schemas"] = {k: v for k, v in old.get("schemas", {}).items() if k != schema}
        except (OSError, ValueError, AttributeError):
            pass
    doc["schemas"][schema] = [
        {"files": sorted([fmt.encode(k) for k in u.keys]),
         "state": base64.b64encode(u.state).decode("ascii") if u.state is not None else None}
        for u in sorted(units, key=lambda u: sorted(u.keys))]
    d = os.path.dirname(os.path.abspath(file))
    fd, tmp = tempfile.mkstemp(prefix=f".{fmt.name.rsplit('-', 1)[0]}-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, separators=(",", ":"))
        os.replace(tmp, file)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
