"""Fingerprints of DataFrames and their comparison."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from dsha.states import parse as parse_state

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
                   content_sum=format(s.content_sum, "032x"), schema=s.schema, algorithm=s.algorithm)


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


def fingerprint(df: Any, *cols: "ColumnOrName", exact: bool = True) -> Fingerprint:
    """The fingerprint of ``df`` (all columns, or the given ones), computed in one Spark job.

    ``exact=False``: an approximate fingerprint from file metadata only (``dsha-meta-v1``, SPEC.md §13: the schema
    and each file's path, size, modification time and ETag), constant in the data size, for a DataFrame read from
    files (classic sessions). It is not a content digest — its algorithm and digest prefix differ, ``rows`` is -1
    (unknown) — and it may say "changed" when only the layout or a timestamp changed; it misses only a rewrite that
    keeps a file's path, size and modification time.
    """
    if not exact:
        return _metadata_fingerprint(df.select(*cols) if cols else df)
    from dsha._session import ensure_loaded, translate_errors
    from dsha.functions import dsha_fingerprint

    ensure_loaded(df.sparkSession)
    with translate_errors():
        row = df.agg(dsha_fingerprint(*(cols or ("*",))).alias("f")).first()
    return _from_struct(row["f"])


def equal(left: Any, right: Any) -> Comparison:
    """Compares two DataFrames by their dsha fingerprints: ``if dsha.equal(a, b): ...``; ``.reason`` otherwise.

    Both fingerprints come from one query (two aggregates joined into one row), so the two sides are scanned and
    hashed side by side rather than one after the other. DataFrames of different sessions are hashed one at a time.
    """
    if left.sparkSession is not right.sparkSession:
        return Comparison(fingerprint(left), fingerprint(right))
    from dsha._session import ensure_loaded, translate_errors
    from dsha.functions import dsha_fingerprint

    ensure_loaded(left.sparkSession)
    with translate_errors():
        row = (left.agg(dsha_fingerprint("*").alias("left"))
               .crossJoin(right.agg(dsha_fingerprint("*").alias("right")))
               .first())
    return Comparison(_from_struct(row["left"]), _from_struct(row["right"]))


def _metadata_fingerprint(df: Any) -> Fingerprint:
    from dsha.files import _java_errors, _jvm_api

    api = _jvm_api(df.sparkSession, "dsha.fingerprint(..., exact=False)")
    r = _java_errors(lambda: api.metadataDigest(df._jdf))
    return Fingerprint(digest=r.digest(), rows=-1, schema_digest=r.schemaDigestHex(), content_sum="",
                       schema=r.schemaText(), algorithm=META_ALGORITHM)
