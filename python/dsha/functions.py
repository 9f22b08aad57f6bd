"""Column functions for dsha's SQL functions. They call the functions by name, so the same code works in classic
PySpark and over Spark Connect (the session must have the extension: see :func:`dsha.configure`)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable, List, Optional, Tuple, Union, cast

from dsha.dependencies import F, optional_module, pyspark_sql
from dsha.spark.keys import Key, key_reference, keyed_id
from dsha.spark.session import check_active_session
from dsha.spark.types import ColumnLike, ColumnOrName

if TYPE_CHECKING:
    from pyspark.sql import Column

__all__ = ["dsha", "dsha_final", "dsha_final_fingerprint", "dsha_fingerprint", "dsha_keyed",
           "dsha_keyed_fingerprint", "dsha_keyed_state", "dsha_merge", "dsha_secure", "dsha_secure_fingerprint",
           "dsha_secure_state", "dsha_secure_v2", "dsha_secure_v2_fingerprint", "dsha_secure_v2_state",
           "dsha_sketch", "dsha_sketch_diff", "dsha_state", "logical_filter_word_in", "logical_hash",
           "logical_hash_in"]


def column_types() -> Tuple[type, ...]:
    """Column classes: in pyspark 3.5 a Spark Connect Column is not a pyspark.sql.Column (in 4.x it is)."""
    connect = optional_module("pyspark.sql.connect.column")  # Spark Connect's dependencies (grpc, ...) are optional
    if connect is None:
        return (pyspark_sql.Column,)
    return (pyspark_sql.Column, connect.Column)


def _columns(cols: Tuple[ColumnOrName, ...]) -> List[Column]:
    if not cols:
        raise ValueError("dsha needs at least one column; pass \"*\" for all columns")
    for c in cols:
        if not isinstance(c, (str, *column_types())):
            raise TypeError(f"dsha functions take column names or Columns, not {type(c).__name__}: {c!r}")
    # Raise DshaNotLoadedError now rather than an UNRESOLVED_ROUTINE later, when the active session can tell.
    check_active_session()
    # F.col("*") is the star, expanded by the analyzer to the input's columns (classic and Spark Connect).
    return [F.col(c) if isinstance(c, str) else c for c in cols]


def logical_hash(*cols: ColumnOrName) -> Column:
    """The 16-byte dsha row digest of the given columns (BINARY), identified by name.

    >>> df.select(logical_hash("*").alias("h"))
    >>> df.select(logical_hash("id", "name"))   # same as logical_hash("name", "id")
    """
    return F.call_function("logical_hash", *_columns(cols))


def logical_hash_in(digests: Union[bytes, bytearray, Iterable[bytes]], *cols: ColumnOrName) -> Column:
    """True when ``logical_hash(*cols)`` is one of ``digests``: an iterable of 16-byte row digests (or their
    concatenation as one bytes value). A filter that fetches rows by digest without computing the digests as values.

    >>> df.filter(logical_hash_in([d1, d2], "*"))
    """
    if isinstance(digests, (bytes, bytearray)):
        data = bytes(digests)
    else:
        items = [bytes(d) for d in digests]
        bad = [d for d in items if len(d) != 16]
        if bad:
            raise ValueError(f"row digests are 16 bytes each, not {len(bad[0])}: {bad[0].hex()}")
        data = b"".join(items)
    if len(data) % 16:
        raise ValueError(f"row digests are 16 bytes each; {len(data)} bytes is not a whole number of them")
    return F.call_function("logical_hash_in", F.lit(bytearray(data)), *_columns(cols))


def logical_filter_word_in(words: Union[bytes, bytearray, Iterable[int]], *cols: ColumnOrName) -> Column:
    """True when the filter word of the row's values (SPEC.md §17.2.1: 32 bits of its fixed-width values and string
    lengths, no string bytes) is one of ``words``: an iterable of ints in [0, 2^32), or their concatenation as one
    bytes value of 4-byte little-endian words. Cheaper than hashing the row: put it before ``logical_hash_in`` to hash
    only the rows whose word is named, as ``dsha.diff`` does with the words its sketch recovers.

    >>> df.filter(logical_filter_word_in([w1, w2], "*") & logical_hash_in([d1, d2], "*"))
    """
    if isinstance(words, (bytes, bytearray)):
        data = bytes(words)
        if len(data) % 4:
            raise ValueError(f"filter words are 4 bytes each; {len(data)} bytes is not a whole number of them")
    else:
        items = list(words)
        bad = [w for w in items if not isinstance(w, int) or isinstance(w, bool) or not 0 <= w < 1 << 32]
        if bad:
            raise ValueError(f"filter words are integers in [0, 2^32), not {bad[0]!r}")
        data = b"".join(w.to_bytes(4, "little") for w in items)
    return F.call_function("logical_filter_word_in", F.lit(bytearray(data)), *_columns(cols))


def dsha(*cols: ColumnOrName) -> Column:
    """Aggregate: the dsha digest string of the rows (order-independent, duplicate-sensitive).

    >>> df.agg(dsha("*")).first()[0]
    'f81b4f5012...'
    >>> df.groupBy("day").agg(dsha("*").alias("digest"))
    """
    return F.call_function("dsha", *_columns(cols))


def dsha_fingerprint(*cols: ColumnOrName) -> Column:
    """Aggregate: the digest and its parts as a struct (digest, rows, schema_digest, content_sum, schema,
    algorithm, multihash).

    >>> df.agg(dsha_fingerprint("*").alias("f")).select("f.rows", "f.digest")
    """
    return F.call_function("dsha_fingerprint", *_columns(cols))


def dsha_state(*cols: ColumnOrName) -> Column:
    """Aggregate: the mergeable digest state of the rows (BINARY, SPEC.md §11).

    >>> df.groupBy("day").agg(dsha_state("*").alias("s"))
    """
    return F.call_function("dsha_state", *_columns(cols))


def dsha_secure(*cols: ColumnOrName) -> Column:
    """Aggregate: the dsha-secure-v1 digest (tamper-evident, no secret; SPEC.md §16.3). Slower than ``dsha``.

    >>> df.agg(dsha_secure("*")).first()[0]
    'fa0b4f5012...'
    """
    return F.call_function("dsha_secure", *_columns(cols))


def dsha_secure_fingerprint(*cols: ColumnOrName) -> Column:
    """Aggregate: the dsha-secure-v1 digest and its parts as a struct (as ``dsha_fingerprint``)."""
    return F.call_function("dsha_secure_fingerprint", *_columns(cols))


def dsha_secure_state(*cols: ColumnOrName) -> Column:
    """Aggregate: the mergeable dsha-secure-v1 state (BINARY, 4 KiB of lattice lanes; SPEC.md §11, §16.3)."""
    return F.call_function("dsha_secure_state", *_columns(cols))


def dsha_secure_v2(*cols: ColumnOrName) -> Column:
    """Aggregate: the dsha-secure-v2 digest (tamper-evident, no secret; SPEC.md §16.7): dsha-secure-v1's purpose at
    about a third of its cost (fixed-key AES instead of a key per row).

    >>> df.agg(dsha_secure_v2("*")).first()[0]
    'fa1b4f5012...'
    """
    return F.call_function("dsha_secure_v2", *_columns(cols))


def dsha_secure_v2_fingerprint(*cols: ColumnOrName) -> Column:
    """Aggregate: the dsha-secure-v2 digest and its parts as a struct (as ``dsha_fingerprint``)."""
    return F.call_function("dsha_secure_v2_fingerprint", *_columns(cols))


def dsha_secure_v2_state(*cols: ColumnOrName) -> Column:
    """Aggregate: the mergeable dsha-secure-v2 state (BINARY, 2 KiB of lattice lanes; SPEC.md §11, §16.7)."""
    return F.call_function("dsha_secure_v2_state", *_columns(cols))


def dsha_sketch(*cols: ColumnOrName) -> Column:
    """Aggregate: the dsha sketch of the rows (BINARY, SPEC.md §17): what ``dsha_sketch_diff`` decodes the
    differing rows of two tables from. Its size is the setting ``spark.dsha.sketch.cells`` (default 49152 cells).

    >>> a.agg(dsha_sketch("*").alias("s")).crossJoin(b.agg(dsha_sketch("*").alias("t")))
    """
    return F.call_function("dsha_sketch", *_columns(cols))


def dsha_sketch_diff(left: ColumnOrName, right: ColumnOrName) -> Column:
    """The decoded difference of two dsha sketches: a struct (decoded, cells, cells_used, estimate, left_rows,
    right_rows, left_digest, right_digest, entries: [(digest, count)], columns). ``dsha.diff`` does it all."""
    return F.call_function("dsha_sketch_diff", _state_column("dsha_sketch_diff", left),
                           _state_column("dsha_sketch_diff", right))


def _literal_key(column: Any) -> Optional[Key]:
    """The key a Column holds as a literal (``F.lit(KEY)``: text other than ``conf:NAME``, or bytes), else None."""
    value: Any = None
    if type(column).__module__.startswith("pyspark.sql.connect"):  # the expression the Column sends
        expr = column.__dict__.get("_expr")  # (a Column's attributes are its fields)
        value = getattr(expr, "_value", None) if type(expr).__name__ == "LiteralExpression" else None
    else:
        jc = column.__dict__.get("_jc")
        node: Any = None
        for accessor in ("node", "expr"):  # classic: Spark 4's ColumnNode, Spark 3.5's Expression
            try:
                node = getattr(jc, accessor)()
                break
            except Exception:  # py4j: no such method on this line
                continue
        if node is not None and node.getClass().getSimpleName() == "Literal":
            value = node.value()
            if type(value).__name__ == "JavaObject" and str(value.getClass().getSimpleName()) == "UTF8String":
                value = str(value.toString())
    if isinstance(value, (bytes, bytearray)) or (isinstance(value, str) and not value.startswith("conf:")):
        return value
    return None


def _key_column(key: Union[Key, ColumnLike], algorithm: Optional[str]) -> Column:
    keyed = keyed_id(algorithm)
    if isinstance(key, column_types()):
        if keyed is not None:
            raise ValueError("algorithm= goes with a key given as bytes or text; a Column key names its algorithm "
                             "itself ('conf:NAME#dsha-keyed-v2') or takes the session's spark.dsha.keyed.algorithm")
        literal = _literal_key(key)
        if literal is None:
            return cast("Column", key)
        key = literal  # F.lit(KEY): handed over as key= is, so the key is not in the query's plan
    spark = pyspark_sql.SparkSession.getActiveSession()
    if spark is None:
        raise RuntimeError("dsha_keyed needs an active SparkSession: the key is handed to its driver, never in the "
                           "query")
    return F.lit(key_reference(spark, cast(Key, key), keyed))


def dsha_keyed(key: Union[Key, ColumnLike], *cols: ColumnOrName, algorithm: Optional[str] = None) -> Column:
    """Aggregate: the keyed digest under a secret key (tamper-evident for whoever lacks the key; SPEC.md §16.2).
    ``key``: bytes (at least 16), or a hex/base64 str, or ``"conf:NAME"`` for a session setting. The key is handed
    to Spark's driver for this session alone, never in the plan or a session setting.
    ``algorithm``: ``"keyed"`` (dsha-keyed-v1) or ``"keyed-v2"`` (dsha-keyed-v2, §16.6) for this call; unset, the
    session's ``spark.dsha.keyed.algorithm`` (dsha-keyed-v1 unless set).

    >>> df.agg(dsha_keyed(os.urandom(32), "*")).first()[0]
    'f90b4f5012...'
    >>> df.agg(dsha_keyed(key, "*", algorithm="keyed-v2")).first()[0]
    'f91b4f5012...'
    """
    columns = _columns(cols)
    return F.call_function("dsha_keyed", _key_column(key, algorithm), *columns)


def dsha_keyed_fingerprint(key: Union[Key, ColumnLike], *cols: ColumnOrName, algorithm: Optional[str] = None) -> Column:
    """Aggregate: the keyed digest and its parts as a struct (as ``dsha_fingerprint``); ``algorithm`` as in
    :func:`dsha_keyed`."""
    columns = _columns(cols)
    return F.call_function("dsha_keyed_fingerprint", _key_column(key, algorithm), *columns)


def dsha_keyed_state(key: Union[Key, ColumnLike], *cols: ColumnOrName, algorithm: Optional[str] = None) -> Column:
    """Aggregate: the mergeable keyed state (BINARY; merges and finalises without the key); ``algorithm`` as in
    :func:`dsha_keyed`."""
    columns = _columns(cols)
    return F.call_function("dsha_keyed_state", _key_column(key, algorithm), *columns)


def _state_column(name: str, state: ColumnOrName) -> Column:
    if not isinstance(state, (str, *column_types())):
        raise TypeError(f"{name} takes a column name or Column of dsha states, not {type(state).__name__}: {state!r}")
    check_active_session()
    return F.col(state) if isinstance(state, str) else state


def dsha_merge(state: ColumnOrName) -> Column:
    """Aggregate: the merge of dsha states (NULL over no states). States of different schemas are an error.

    >>> states.agg(dsha_final(dsha_merge("s")))
    """
    return F.call_function("dsha_merge", _state_column("dsha_merge", state))


def dsha_final(state: ColumnOrName) -> Column:
    """The digest string of a dsha state: what ``dsha`` gives for the same rows."""
    return F.call_function("dsha_final", _state_column("dsha_final", state))


def dsha_final_fingerprint(state: ColumnOrName) -> Column:
    """The fingerprint struct of a dsha state: what ``dsha_fingerprint`` gives for the same rows."""
    return F.call_function("dsha_final_fingerprint", _state_column("dsha_final_fingerprint", state))

