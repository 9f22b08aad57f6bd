"""The dsha-meta-v1 framing of table formats (SPEC.md §13.1, §13.2): an approximate fingerprint from a table's
metadata, ``SHA-256("dsha-meta-v1:" || format || schema_digest || u32(len(id)) || id || version)`` as a multihash
of code 0x3d5a80. (The file-listing form of §13 is the jar's ``files/MetadataDigest``.)"""
from __future__ import annotations

import hashlib
import struct

from dsha.core.algorithms import META_ALGORITHM, META_CODE
from dsha.core.fingerprint import Fingerprint
from dsha.core.states import multihash

__all__ = ["table_meta_fingerprint"]


def table_meta_fingerprint(table_format: str, schema_digest: bytes, schema: str, table_id: str,
                           version: bytes) -> Fingerprint:
    """The dsha-meta-v1 fingerprint of a table: ``table_format`` ("delta", "iceberg"), the canonical schema and its
    digest, the table's identity (UTF-8) and its data version as the format frames it (u64 for a Delta version,
    i64 for an Iceberg snapshot id). ``rows`` is -1: it is not a content digest."""
    identity = table_id.encode("utf-8")
    meta = hashlib.sha256(f"{META_ALGORITHM}:{table_format}".encode("ascii") + schema_digest
                          + struct.pack("<I", len(identity)) + identity + version).digest()
    return Fingerprint(digest="f" + multihash(META_CODE, meta).hex(), rows=-1, schema_digest=schema_digest.hex(),
                       content_sum="", schema=schema, algorithm=META_ALGORITHM)
