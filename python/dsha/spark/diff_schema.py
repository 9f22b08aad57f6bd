"""The schema side of ``dsha.diff``: which columns differ in name or type, as the digest sees types (SPEC.md §7), and
the right table in the left's layout when the two differ only in what the digest does not see.

SPEC.md §7: column order, struct field order (fields are identified by name), nullability and CHAR/VARCHAR versus
STRING do not change a digest. Two columns whose types differ only in those are the same column for ``dsha.diff``, as
for ``dsha.equal``; the right's values are then rebuilt in the left's struct field order (by field name), so that its
rows can be compared, joined and united with the left's.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Dict, List, Tuple

from dsha.core.diff_report import SchemaChanges
from dsha.dependencies import F, pyspark_types
from dsha.spark.diff_names import quoted

__all__ = ["SchemaDifference", "canonical_type", "in_layout_of", "schema_difference"]


@dataclass(frozen=True)
class SchemaDifference:
    """Columns only on the right (added), only on the left (removed), and of another type (retyped)."""

    added: List[Tuple[str, str]]
    removed: List[Tuple[str, str]]
    retyped: List[Tuple[str, str, str]]

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.retyped)

    def explain(self) -> str:
        return self.changes().explain()

    def changes(self) -> SchemaChanges:
        """The same difference as the backend-free value that diff reports are made of."""
        return SchemaChanges(tuple(self.added), tuple(self.removed), tuple(self.retyped))

    def to_dict(self) -> dict:
        return {"added": [{"column": n, "type": t} for n, t in self.added],
                "removed": [{"column": n, "type": t} for n, t in self.removed],
                "retyped": [{"column": n, "left": a, "right": b} for n, a, b in self.retyped]}


def _utf8(name: str) -> bytes:
    return name.encode("utf-8", "surrogatepass")


def canonical_type(t: Any) -> str:
    """The type as the digest sees it (SPEC.md §2.2, §7): struct fields in canonical order (by the UTF-8 bytes of their
    names, each name quoted), no nullability, CHAR(n)/VARCHAR(n) as string."""
    if isinstance(t, pyspark_types.StructType):
        fields = sorted(t.fields, key=lambda f: _utf8(f.name))
        return "struct<" + ",".join(f"{json.dumps(f.name)}:{canonical_type(f.dataType)}" for f in fields) + ">"
    if isinstance(t, pyspark_types.ArrayType):
        return f"array<{canonical_type(t.elementType)}>"
    if isinstance(t, pyspark_types.MapType):
        return f"map<{canonical_type(t.keyType)},{canonical_type(t.valueType)}>"
    if type(t).__name__ in ("CharType", "VarcharType"):  # pyspark has them since 3.4 (Spark may keep them, 4.x)
        return "string"
    return str(t.simpleString())


def _types(df: Any) -> Dict[str, Any]:
    return {f.name: f.dataType for f in df.schema.fields}


def schema_difference(left: Any, right: Any) -> SchemaDifference:
    """Columns added (only right), removed (only left) and retyped, by name; a column is retyped when its canonical
    type differs (SPEC.md §7: not by nullability or struct field order), and shown with each side's own type."""
    lt, rt = _types(left), _types(right)
    return SchemaDifference(
        added=[(n, t.simpleString()) for n, t in rt.items() if n not in lt],
        removed=[(n, t.simpleString()) for n, t in lt.items() if n not in rt],
        retyped=[(n, lt[n].simpleString(), rt[n].simpleString()) for n in lt
                 if n in rt and canonical_type(lt[n]) != canonical_type(rt[n])])


def _in_layout(col: Any, have: Any, want: Any) -> Any:
    """``col`` (of type ``have``) with its struct fields in ``want``'s order, at every depth; ``have`` and ``want``
    have one canonical type."""
    if have.simpleString() == want.simpleString():
        return col
    if isinstance(want, pyspark_types.StructType):
        mine = {f.name: f.dataType for f in have.fields}
        rebuilt = F.struct(*[_in_layout(col.getField(f.name), mine[f.name], f.dataType).alias(f.name)
                             for f in want.fields])
        return F.when(col.isNull(), F.lit(None)).otherwise(rebuilt)
    if isinstance(want, pyspark_types.ArrayType):
        return F.transform(col, lambda e: _in_layout(e, have.elementType, want.elementType))
    if isinstance(want, pyspark_types.MapType):
        keys = F.transform_keys(col, lambda k, _: _in_layout(k, have.keyType, want.keyType))
        return F.transform_values(keys, lambda _, v: _in_layout(v, have.valueType, want.valueType))
    return col  # CHAR/VARCHAR beside STRING: the same values


def in_layout_of(right: Any, left: Any) -> Any:
    """``right`` with the left's column order and struct field order (by name); ``right`` itself, columns reordered,
    when the struct field orders already agree. The schemas have no ``schema_difference``."""
    lt, rt = _types(left), _types(right)
    return right.select(*[
        F.col(quoted(c)) if lt[c].simpleString() == rt[c].simpleString()
        else _in_layout(F.col(quoted(c)), rt[c], lt[c]).alias(c) for c in left.columns])
