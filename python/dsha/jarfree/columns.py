"""``logical_hash`` as a Column without the jar: an Arrow UDF (Spark 4.1+) that hashes each row of the given
columns with the Arrow engine, the jar's 16-byte row digest (SPEC.md §4.2) as BINARY.

Only where Spark hands the UDF the values exactly: Arrow UDFs (``arrow_udf``, Spark 4.1+) and column types of
SPEC.md Appendix A.2; a pandas UDF (older lines) would convert them, so there this raises instead.
"""
from __future__ import annotations

from typing import Any, List

import pyarrow as pa
import pyarrow.types as pat

import dsha.arrow
from dsha.errors import UnsupportedTypeError

__all__ = ["logical_hash"]


# the field metadata keys Spark marks the structs with that carry a variant, geometry or geography (pyspark's
# to_arrow_type): such a struct is not a struct of the jar's
_TAGGED = (b"variant", b"geometry", b"geography")


def _exact(t: pa.DataType, path: str) -> None:
    """Refuses the Arrow types that carry a Spark type the jar hashes as another (A.2: intervals, TIME, variant...)."""
    if pat.is_struct(t):
        for i in range(t.num_fields):
            field = t.field(i)
            if field.metadata and any(k in field.metadata for k in _TAGGED):  # not a struct: Spark's mark says so
                raise UnsupportedTypeError(f"column {path}: Spark hands it over as {t}, the transfer of a variant or "
                                           f"spatial type, which the jar-free logical_hash cannot hash as the jar does")
            _exact(field.type, f"{path}.{field.name}")
    elif pat.is_list(t) or pat.is_large_list(t):
        _exact(t.value_type, f"{path}[]")
    elif pat.is_map(t):
        _exact(t.key_type, f"{path}.key")
        _exact(t.item_type, f"{path}.value")
    elif not (pat.is_boolean(t) or pat.is_integer(t) or pat.is_floating(t) or pat.is_decimal(t) or pat.is_null(t)
              or pat.is_string(t) or pat.is_large_string(t) or pat.is_binary(t) or pat.is_large_binary(t)
              or pat.is_date32(t) or (pat.is_timestamp(t) and t.unit == "us")):
        raise UnsupportedTypeError(f"column {path}: Spark hands it over as the Arrow type {t}, which the jar-free "
                                   f"logical_hash cannot hash as the jar does (SPEC.md Appendix A.2)")


def _hash_rows(names: List[str], *arrays: pa.Array) -> pa.Array:
    """On an executor: the row digests of one batch of the columns (named as the call names them)."""
    batch = pa.RecordBatch.from_arrays(list(arrays), names=names)
    for field in batch.schema:
        _exact(field.type, field.name)
    return dsha.arrow.logical_hash(batch).cast(pa.binary())


def logical_hash(*names: str) -> Any:
    """The row digest of the named columns as a Column (BINARY, 16 bytes), computed by Python on the executors:
    ``df.select(dsha.jarfree.columns.logical_hash("id", "name"))`` equals the jar's ``logical_hash(id, name)``.
    Columns are given by name, spelt as the table spells them (SPEC.md §2.1: a nested field ``s.x`` is named
    ``x``); Spark 4.1+ (Arrow UDFs). It sees values, not the DataFrame's Spark schema: a collated string arrives as
    a plain Arrow string and is hashed as ``string`` (the jar: ``string collate ...``), so pass no collated strings
    (``dsha.fingerprint`` reads the schema and refuses them)."""
    from pyspark.sql import functions as F

    if not names:
        raise ValueError("logical_hash needs at least one column name")
    if not all(isinstance(n, str) for n in names):
        raise TypeError("the jar-free logical_hash takes column names: select and alias an expression first")
    arrow_udf: Any = getattr(F, "arrow_udf", None)
    if arrow_udf is None:
        raise UnsupportedTypeError("the jar-free logical_hash needs Arrow UDFs (Spark 4.1+); on older lines add the "
                                   "dsha jar, or use dsha.fingerprint, which has no such limit")
    fields = [n.rsplit(".", 1)[-1] for n in names]  # a nested field by its last name, as §2.1 names it
    udf = arrow_udf(lambda *arrays: _hash_rows(fields, *arrays), "binary")
    return udf(*[F.col(n) for n in names]).alias("logical_hash")
