"""Fingerprints of DataFrames and their comparison."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from dsha.states import content_sum_hex, parse as parse_state

if TYPE_CHECKING:
    from dsha.functions import ColumnOrName


@dataclass(frozen=True)
class Fingerprint:
    """The dsha digest of a DataFrame and the parts it is made of (SPEC.md §6)."""

    digest: str
    rows: int
    schema_digest: str
    content_sum: str
    schema: str
    algorithm: str

    def __str__(self) -> str:
        return self.digest

    @classmethod
    def from_state(cls, state: bytes) -> "Fingerprint":
        """The fingerprint of a digest state (``dsha.state``, ``dsha.merge``, SQL ``dsha_state``), computed in pure
        Python: the same ``Fingerprint`` that ``dsha.fingerprint`` gives for the same rows (SPEC.md §11)."""
        s = parse_state(state)
        return cls(digest=s.digest, rows=s.rows, schema_digest=s.schema_digest.hex(),
                   content_sum=content_sum_hex(s.algorithm, s.content_sum), schema=s.schema, algorithm=s.algorithm)


@dataclass(frozen=True)
class Comparison:
    """Truthy exactly when the two fingerprints are equal; ``reason`` says which part differs."""

    left: Fingerprint
    right: Fingerprint

    @property
    def equal(self) -> bool:
        return self.left.digest == self.right.digest

    @property
    def reason(self) -> Optional[str]:
        if self.equal:
            return None
        if self.left.schema_digest != self.right.schema_digest:
            return "schema"
        if self.left.rows != self.right.rows:
            return "row count"
        return "content"

    def explain(self) -> str:
        if self.equal:
            return f"equal: {self.left.digest} ({self.left.rows} rows)"
        if self.reason == "schema":
            return f"schemas differ:\n  {self.left.schema}\n  {self.right.schema}"
        if self.reason == "row count":
            return f"row counts differ: {self.left.rows} vs {self.right.rows}"
        return f"same schema and row count ({self.left.rows}), different content"

    def __bool__(self) -> bool:
        return self.equal


def _from_struct(f: Any) -> Fingerprint:
    return Fingerprint(digest=f["digest"], rows=int(f["rows"]), schema_digest=f["schema_digest"],
                       content_sum=f["content_sum"], schema=f["schema"], algorithm=f["algorithm"])


META_ALGORITHM = "dsha-meta-v1"

# algorithm= names (SPEC.md §16): the short name and the id alike; the keyed ones also name the Column functions'.
KEYED_ALGORITHMS = {"keyed": "dsha-keyed-v1", "dsha-keyed-v1": "dsha-keyed-v1", "keyed-v2": "dsha-keyed-v2",
                    "dsha-keyed-v2": "dsha-keyed-v2"}
_ALGORITHM_NAMES = {None: "dsha-v1", "v1": "dsha-v1", "dsha-v1": "dsha-v1", "secure": "dsha-secure-v1",
                    "dsha-secure-v1": "dsha-secure-v1", **KEYED_ALGORITHMS}
KEYED = ("dsha-keyed-v1", "dsha-keyed-v2")


def named_algorithm(key: Any) -> Optional[str]:
    """The algorithm a key reference names, ``conf:NAME#ALGORITHM`` (SPEC.md §16.2), else None."""
    if isinstance(key, str) and key.startswith("conf:") and "#" in key:
        return key.rsplit("#", 1)[1].strip()
    return None


def algorithm_id(algorithm: Optional[str], key: Any) -> str:
    """The algorithm id of ``algorithm=`` and ``key=`` (SPEC.md §16): a key means dsha-keyed-v1, unless its reference
    names another."""
    if algorithm is None:
        algorithm = named_algorithm(key)
    if algorithm not in _ALGORITHM_NAMES:
        raise ValueError(f"unknown dsha algorithm {algorithm!r}: use 'v1', 'secure', or 'keyed' / 'keyed-v2' (with "
                         "key=)")
    resolved = "dsha-keyed-v1" if key is not None and algorithm is None else _ALGORITHM_NAMES[algorithm]
    if (resolved in KEYED) != (key is not None):
        raise ValueError("key= and algorithm='keyed' go together (or 'keyed-v2'): the keyed digests need a key, the "
                         "others take none")
    return resolved


class _Digests:
    """The aggregate functions of one algorithm (and key): ``fingerprint(*cols)`` / ``state(*cols)`` Columns. A key
    goes to Spark as a session setting (``functions.key_reference``), removed again by ``close``; a keyed algorithm
    is named with it (``conf:NAME#ALGORITHM``), so the session's settings are never changed for it."""

    def __init__(self, spark: Any, algorithm: Optional[str], key: Any):
        self.algorithm = algorithm_id(algorithm, key)
        self.spark, self.reference, self.setting = spark, None, None
        if key is not None:
            from dsha.functions import key_reference, key_setting

            setting = key_setting(key)
            # Spark removes a key setting when it reads it; close() removes one made here if the query failed
            # before; one that exists (a Column made with the same key, a "conf:NAME" the caller gave) stays.
            if setting is not None and spark.conf.get(setting[0], None) is None:
                self.setting = setting[0]
            self.reference = key_reference(spark, key, self.algorithm)

    def _call(self, form: str, cols: tuple) -> Any:
        from pyspark.sql import functions as F

        import dsha.functions as fn

        names = {"dsha-v1": "dsha", "dsha-secure-v1": "dsha_secure", "dsha-keyed-v1": "dsha_keyed",
                 "dsha-keyed-v2": "dsha_keyed"}
        name = names[self.algorithm] + form
        columns = cols or ("*",)
        if self.reference is None:
            return getattr(fn, name)(*columns)
        return getattr(fn, name)(F.lit(self.reference), *columns)

    def fingerprint(self, *cols: Any) -> Any:
        return self._call("_fingerprint", cols)

    def state(self, *cols: Any) -> Any:
        return self._call("_state", cols)

    def close(self) -> None:
        if self.setting is not None and self.spark.conf.get(self.setting, None) is not None:
            self.spark.conf.unset(self.setting)

    def __enter__(self) -> "_Digests":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def fingerprint(df: Any, *cols: "ColumnOrName", exact: bool = True, algorithm: Optional[str] = None,
                key: Any = None) -> Fingerprint:
    """The fingerprint of ``df`` (all columns, or the given ones), computed in one Spark job.

    ``exact=False``: an approximate fingerprint from file metadata only (``dsha-meta-v1``, SPEC.md §13: the schema
    and each file's path, size, modification time and ETag), constant in the data size, for a DataFrame read from
    files (classic sessions). It is not a content digest — its algorithm and digest prefix differ, ``rows`` is -1
    (unknown) — and it may say "changed" when only the layout or a timestamp changed; it misses only a rewrite that
    keeps a file's path, size and modification time.

    Tamper-evident digests (SPEC.md §16): ``algorithm="secure"`` (dsha-secure-v1, no secret) or ``key=`` (bytes of
    at least 16, or a hex/base64 str: dsha-keyed-v1). The key reaches Spark as a redacted session setting, never in
    the query, and is removed from the session afterwards.
    """
    if not exact:
        if algorithm is not None or key is not None:
            raise ValueError("exact=False (dsha-meta-v1) takes no algorithm or key")
        return _metadata_fingerprint(df.select(*cols) if cols else df)
    from dsha._session import ensure_loaded, translate_errors

    ensure_loaded(df.sparkSession)
    with _Digests(df.sparkSession, algorithm, key) as digests, translate_errors():
        row = df.agg(digests.fingerprint(*cols).alias("f")).first()
    return _from_struct(row["f"])


def equal(left: Any, right: Any, algorithm: Optional[str] = None, key: Any = None) -> Comparison:
    """Compares two DataFrames by their dsha fingerprints: ``if dsha.equal(a, b): ...``; ``.reason`` otherwise.

    Both fingerprints come from one query (two aggregates joined into one row), so the two sides are scanned and
    hashed side by side rather than one after the other. DataFrames of different sessions are hashed one at a time.
    """
    if left.sparkSession is not right.sparkSession:
        return Comparison(fingerprint(left, algorithm=algorithm, key=key),
                          fingerprint(right, algorithm=algorithm, key=key))
    from dsha._session import ensure_loaded, translate_errors

    ensure_loaded(left.sparkSession)
    with _Digests(left.sparkSession, algorithm, key) as digests, translate_errors():
        row = (left.agg(digests.fingerprint().alias("left"))
               .crossJoin(right.agg(digests.fingerprint().alias("right")))
               .first())
    return Comparison(_from_struct(row["left"]), _from_struct(row["right"]))


def _metadata_fingerprint(df: Any) -> Fingerprint:
    from dsha.files import _java_errors, _jvm_api

    api = _jvm_api(df.sparkSession, "dsha.fingerprint(..., exact=False)")
    r = _java_errors(lambda: api.metadataDigest(df._jdf))
    return Fingerprint(digest=r.digest(), rows=-1, schema_digest=r.schemaDigestHex(), content_sum="",
                       schema=r.schemaText(), algorithm=META_ALGORITHM)
