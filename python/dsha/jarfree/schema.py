"""The canonical schema of a DataFrame on the jar-free path, and the types it refuses (SPEC.md Appendix A.2).

The canonical schema comes from the DataFrame's Spark schema: the Arrow schema Spark's own transfer gives it
(``to_arrow_schema``, what ``mapInArrow`` hands the executors), read by the Arrow engine's mapping. That is exact
for the types below, whose Arrow transfer keeps every value and maps to the canonical type the jar gives; every
other type (intervals, variant, TIME, collated strings, user-defined types, ...) is refused with its column, never
hashed under another type.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, List

from dsha.arrow import canonical_schema as arrow_canonical_schema
from dsha.dependencies import pyspark_types
from dsha.errors import UnsupportedTypeError

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["arrow_schema", "canonical_schema", "check_types"]

# Spark types whose Arrow transfer is exact and whose canonical type the Arrow engine derives as the jar does.
_EXACT = ("BooleanType", "ByteType", "ShortType", "IntegerType", "LongType", "FloatType", "DoubleType", "DecimalType",
          "BinaryType", "DateType", "TimestampType", "TimestampNTZType", "NullType", "CharType", "VarcharType")


def _refusal(path: str, t: Any, why: str) -> UnsupportedTypeError:
    return UnsupportedTypeError(f"column {path}: {t.simpleString()} {why}; the jar-free path cannot hash it exactly "
                                f"(run with the dsha jar: docs/getting-started.md; or select other columns)")


def _check(path: str, t: Any, problems: List[UnsupportedTypeError]) -> None:
    name = type(t).__name__
    if isinstance(t, pyspark_types.StructType):
        for f in t.fields:
            _check(f"{path}.{f.name}", f.dataType, problems)
    elif isinstance(t, pyspark_types.ArrayType):
        _check(f"{path}[]", t.elementType, problems)
    elif isinstance(t, pyspark_types.MapType):
        _check(f"{path}.key", t.keyType, problems)
        _check(f"{path}.value", t.valueType, problems)
    elif isinstance(t, pyspark_types.StringType):
        collation = getattr(t, "collation", "UTF8_BINARY")  # pyspark 4 types carry their collation
        if collation not in (None, "UTF8_BINARY"):
            problems.append(_refusal(path, t, f"has the collation {collation}, which Arrow does not carry"))
    elif name not in _EXACT:
        problems.append(_refusal(path, t, "has no exact Arrow transfer in Spark"))


def check_types(schema: Any) -> None:
    """Raises :class:`UnsupportedTypeError` for the first column whose type the jar-free path refuses."""
    problems: List[UnsupportedTypeError] = []
    for f in schema.fields:
        _check(f.name, f.dataType, problems)
    if problems:
        raise problems[0]


def arrow_schema(schema: Any) -> pa.Schema:
    """The Arrow schema of Spark's transfer of ``schema`` (timestamps in UTC, as Spark hands them to Python)."""
    import inspect

    from pyspark.sql.pandas.types import to_arrow_schema

    if "timezone" in inspect.signature(to_arrow_schema).parameters:  # pyspark 4 asks; any zone is an instant
        return to_arrow_schema(schema, timezone="UTC")
    return to_arrow_schema(schema)


def canonical_schema(schema: Any) -> str:
    """SPEC.md §2's canonical schema of a Spark schema, after :func:`check_types`."""
    check_types(schema)
    return arrow_canonical_schema(arrow_schema(schema))
