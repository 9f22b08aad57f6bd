"""States of the tamper-evident algorithms (SPEC.md §16) over Arrow data: the input's batches, each row's secure
encoding (``_secure_encode``), the algorithm's row function and combiner (``_tamper``), one ``DigestState``.
``dsha.arrow.state``/``fingerprint`` come here for any algorithm but dsha-v1."""
from __future__ import annotations

import hashlib
from typing import Any, Callable, List, Optional, Sequence

import pyarrow as pa

from dsha.arrow._secure_encode import row_bytes
from dsha.arrow._sources import to_batches
from dsha.arrow._tamper import RowFunction, row_function
from dsha.arrow._types import schema_string
from dsha.core.algorithms import BY_ID
from dsha.core.key_bytes import key_bytes
from dsha.core.states import DigestState

__all__ = ["row_values", "secure_state"]


class _Rows:
    """The canonical schema of the input and its algorithm's row function."""

    def __init__(self, schema: pa.Schema, algorithm: str, key: Any, seeded: bool = False):
        if BY_ID[algorithm].keyed:
            if key is None:
                raise ValueError(f"{algorithm} needs a key (key=)")
            raw = key if seeded else key_bytes(key)
        elif key is not None:
            raise ValueError(f"{algorithm} takes no key: key= goes with algorithm='keyed' or 'keyed-v2'")
        else:
            raw = b""
        self.text = schema_string(schema)
        self.schema_digest = hashlib.sha256(self.text.encode("utf-8", "surrogatepass")).digest()
        self.function: RowFunction = row_function(algorithm, self.schema_digest, raw, seeded)

    def encoded(self, batch: pa.RecordBatch) -> Any:
        text = schema_string(batch.schema)
        if text != self.text:  # e.g. one file dictionary-encoded: it must still be the same canonical schema
            raise ValueError(f"a batch of the input has the canonical schema {text}, not {self.text} as the input's "
                             "schema says")
        return row_bytes(batch)


def secure_state(obj: Any, columns: Optional[Sequence[str]], algorithm: str, key: Any, *,
                 format: Optional[str] = None, batch_size: Optional[int] = None, partitioning: Optional[str] = None,
                 progress: Optional[Callable[[int], None]] = None, seeded: bool = False) -> DigestState:
    """The state (SPEC.md §11) of ``obj``'s rows under a tamper-evident algorithm (its id) and key (``seeded``: for
    dsha-keyed-v2, ``key`` is the bytes of the table's subkey seed, ``_tamper.subkey_seed``)."""
    schema, batches = to_batches(obj, columns, format=format, batch_size=batch_size, partitioning=partitioning)
    rows = _Rows(schema, algorithm, key, seeded)
    total = DigestState(algorithm, rows.text, rows.schema_digest, 0, 0)
    for batch in batches:
        if batch.num_rows == 0:
            continue
        offsets, data = rows.encoded(batch)
        part = DigestState(algorithm, rows.text, rows.schema_digest, batch.num_rows,
                           rows.function.combine(offsets, data))
        total = total.merge(part)
        if progress is not None:
            progress(total.rows)
    return total


def row_values(obj: Any, columns: Optional[Sequence[str]], algorithm: str, key: Any = None) -> List[bytes]:
    """Each row's value, in row order: its MAC (dsha-keyed-v1), row value (dsha-keyed-v2), seed (dsha-secure-v1) or
    2048-byte stream (dsha-secure-v2, whose golden vectors list each stream's SHA-256), as the golden vectors list
    them (SPEC.md §16.5, §16.7)."""
    schema, batches = to_batches(obj, columns)
    rows = _Rows(schema, algorithm, key)
    out: List[bytes] = []
    for batch in batches:
        if batch.num_rows:
            out.extend(rows.function.values(*rows.encoded(batch)))
    return out
