"""dsha for SQL without the jar (Spark 4.1+): Arrow UDFs registered under ``dsha_py_*`` names, and the table digest as
a plain SQL query over them (SPEC.md §4-§6), byte-identical to the jar's ``logical_hash`` and ``dsha``.

A SQL function cannot see its arguments' names, so each takes the row as ONE struct, whose fields are the hashed
columns: ``dsha_py_logical_hash(struct(a, b))`` is the jar's ``logical_hash(a, b)``, ``struct(*)`` every column.
What the Arrow transfer hides cannot be refused here: a collated string arrives as a plain string (hashed as
``string``, not the jar's ``string collate C``), and ``struct()`` names a column as the query spells it (the jar: as
the table does). The digest is no aggregate UDF (Spark's Arrow aggregates have no partial merge and give no row for
an empty table) but :func:`digest_sql`: sums of the row digests' four 32-bit words, finished by ``sha2`` in SQL.
"""
from __future__ import annotations

import hashlib
from typing import Any, Dict

import pyarrow as pa
import pyarrow.types as pat

from dsha.core.algorithms import BY_ID, DEFAULT
from dsha.core.states import multihash
from dsha.errors import UnsupportedTypeError
from dsha.jarfree.columns import _TAGGED, _exact
from dsha.spark.session import FUNCTIONS

__all__ = ["PREFIX", "digest_sql", "register"]

PREFIX = "dsha_py"


def _checked_fields(rows: pa.Array) -> pa.Schema:
    """The hashed columns: the fields of the one struct argument, every type exact (SPEC.md Appendix A.2)."""
    t = rows.type
    fields = [t.field(i) for i in range(t.num_fields)] if pat.is_struct(t) else []
    if not fields or any(f.metadata and any(k in f.metadata for k in _TAGGED) for f in fields):
        raise UnsupportedTypeError(f"dsha's SQL functions without the jar take the row as one struct of at least one "
                                   f"column, e.g. struct(a, b) or struct(*), not {t}")
    for f in fields:
        _exact(f.type, f.name)
    return pa.schema(fields)


def _schema_digest(schema: pa.Schema) -> str:
    import dsha.arrow

    return hashlib.sha256(dsha.arrow.canonical_schema(schema).encode("utf-8", "surrogatepass")).hexdigest()


def _row_hashes(rows: pa.Array) -> pa.Array:
    """On an executor: the row digests (SPEC.md §4.2) of a batch of row structs."""
    import dsha.arrow

    schema = _checked_fields(rows)
    if rows.null_count:
        raise ValueError("dsha's row hash without the jar: the row struct is null in a row; pass struct(...) of the "
                         "columns")
    batch = pa.RecordBatch.from_arrays(rows.flatten(), schema=schema)
    return dsha.arrow.logical_hash(batch).cast(pa.binary())


def _schema_digests(rows: pa.Array) -> pa.Array:
    """On an executor: the schema digest (SPEC.md §2, hex) of the row struct's type, whatever its values (null too,
    as ``first`` gives over no rows)."""
    return pa.array([_schema_digest(_checked_fields(rows))] * len(rows), pa.string())


def register(spark: Any, prefix: str = PREFIX) -> Dict[str, str]:
    """Registers, for the session's SQL, ``{prefix}_logical_hash(row_struct)`` (BINARY, 16 bytes: the jar's
    ``logical_hash`` of the struct's fields) and ``{prefix}_schema_digest(row_struct)`` (STRING: the schema digest's
    hex, what :func:`digest_sql` finishes with); returns ``{name: what it is}``. Spark 4.1+ (Arrow UDFs), classic or
    Connect; the executors' Python needs dsha and pyarrow, as the rest of the jar-free path."""
    from pyspark.sql import functions as F

    arrow_udf: Any = getattr(F, "arrow_udf", None)
    if arrow_udf is None:
        raise UnsupportedTypeError("dsha's SQL functions without the jar need Arrow UDFs (Spark 4.1+); on older lines "
                                   "add the dsha jar (its SQL functions), or use dsha.fingerprint from Python")
    made = {f"{prefix}_logical_hash": (_row_hashes, "binary", "the row digest of the struct's fields (logical_hash)"),
            f"{prefix}_schema_digest": (_schema_digests, "string", "the schema digest of the struct's fields (hex)")}
    if not prefix.isidentifier() or prefix.lower() in ("dsha", "logical") \
            or any(name.lower() in FUNCTIONS for name in made):
        raise ValueError(f"prefix {prefix!r}: an SQL name whose functions cannot be taken for the jar's "
                         f"(dsha_py is the default)")
    for name, (fn, returns, _) in made.items():
        spark.udf.register(name, arrow_udf(fn, returns))
    return {name: what for name, (_, _, what) in made.items()}


def digest_sql(relation: str, row: str = "struct(*)", prefix: str = PREFIX) -> str:
    """The SQL query whose one value (``digest``) is the jar's ``dsha(...)`` of ``row``'s fields over ``relation`` (a
    table name or a parenthesised subquery): the row digests' four 32-bit words (little-endian, SPEC.md §4.2) summed
    as DECIMAL(38, 0), carried into the sum mod 2^128 and finalised by SHA-256 as SPEC.md §6 does, all in SQL. Words
    of 32 bits, as ``conv`` reads them on every engine (Sail's reads no unsigned 64-bit number); exact up to 2^63
    rows (``count``'s limit)."""
    def le(text: str, width: int) -> str:  # hex digits <-> the same bytes in reverse order
        return f"regexp_replace({text}, '{'(..)' * width}', '{''.join(f'${i}' for i in range(width, 0, -1))}')"

    def word(i: int) -> str:
        return f"coalesce(sum(CAST(conv({le(f'substr(h, {8 * i + 1}, 8)', 4)}, 16, 10) AS DECIMAL(28, 0))), 0) AS w{i}"

    def out(value: str) -> str:
        return le(f"lpad(conv(CAST(pmod({value}, 4294967296) AS STRING), 10, 16), 8, '0')", 4)

    # the digest string's start: "f", then the multihash code and length of a SHA-256 (core/states.multihash)
    head = "f" + multihash(BY_ID[DEFAULT].code, bytes(32))[:-32].hex()
    rows = le("lpad(conv(CAST(n AS STRING), 10, 16), 16, '0')", 8)
    carried = "w0"
    sums = [carried]
    for i in (1, 2, 3):
        carried = f"w{i} + ({carried}) div 4294967296"
        sums.append(carried)
    return "\n".join([
        f"WITH d AS (SELECT hex({prefix}_logical_hash({row})) AS h, {row} AS r FROM {relation}),",
        f"s AS (SELECT {prefix}_schema_digest(first(r)) AS schema, count(*) AS n,",
        *[f"       {word(i)}," for i in range(3)],
        f"       {word(3)} FROM d)",
        f"SELECT concat('{head}', sha2(unhex(concat(hex('{DEFAULT}'), schema,",
        f"         {rows},",
        *[f"         {out(v)}{',' if i < 3 else ''}" for i, v in enumerate(sums)],
        "         )), 256)) AS digest",
        "FROM s",
    ])
