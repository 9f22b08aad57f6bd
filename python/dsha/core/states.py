"""Mergeable digest states (SPEC.md §11): computed by Spark (``dsha_state``) or the Arrow engine, parsed, merged and
finalised here in pure Python, so that digests of parts (files, days, jobs) combine into the digest of the whole
without Spark.

>>> a, b = dsha.state(df_january), dsha.state(df_february)
>>> dsha.Fingerprint.from_state(dsha.merge([a, b])) == dsha.fingerprint(df_january.union(df_february))
True
"""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from typing import Iterable, Optional

from dsha.core.algorithms import BY_CODE, BY_ID
from dsha.errors import StateError

__all__ = ["FORMAT_VERSION", "MAGIC", "DigestState", "StateError", "content_sum_hex", "merge", "multihash", "parse",
           "varint"]

MAGIC = b"DSHS"
FORMAT_VERSION = 1
_U64 = 1 << 64
_SCHEMA_DIGEST_BYTES = 32


def _add(algorithm: str, a: int, b: int) -> int:
    """The merge of two combiner states, each held as the integer of its bytes read little-endian (one number summed
    mod 2^(8*bytes), or lanes of 64 bits summed lane by lane: dsha-secure-v1's LtHash)."""
    width = BY_ID[algorithm].state_bytes
    if not BY_ID[algorithm].lanes:
        return (a + b) % (1 << (8 * width))
    x, y = a.to_bytes(width, "little"), b.to_bytes(width, "little")
    lanes = [(u + v) % _U64 for u, v in zip(struct.unpack(f"<{width // 8}Q", x), struct.unpack(f"<{width // 8}Q", y))]
    return int.from_bytes(struct.pack(f"<{width // 8}Q", *lanes), "little")


def content_sum_hex(algorithm: str, content_sum: int) -> str:
    """``content_sum`` as fingerprints print it: a sum most significant digit first; lanes in byte order."""
    width = BY_ID[algorithm].state_bytes
    if BY_ID[algorithm].lanes:
        return content_sum.to_bytes(width, "little").hex()
    return format(content_sum, f"0{2 * width}x")


def varint(n: int) -> bytes:
    """``n`` as an unsigned LEB128 varint (the multihash code and length)."""
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


@dataclass(frozen=True)
class DigestState:
    """A parsed state: the algorithm, the canonical schema and its digest, the row count and the combiner state
    (``content_sum``: the sum, or for dsha-secure-v1 the integer of its 4096 lane bytes read little-endian)."""

    algorithm: str
    schema: str
    schema_digest: bytes
    rows: int
    content_sum: int

    def to_bytes(self) -> bytes:
        text = self.schema.encode("utf-8")
        return (MAGIC + bytes([FORMAT_VERSION]) + varint(BY_ID[self.algorithm].code)
                + struct.pack("<I", len(self.schema_digest)) + self.schema_digest
                + struct.pack("<Q", self.rows % _U64)
                + struct.pack("<I", self._width) + self.content_sum.to_bytes(self._width, "little")
                + struct.pack("<I", len(text)) + text)

    def merge(self, other: DigestState) -> DigestState:
        if other.algorithm != self.algorithm:
            raise StateError(
                f"cannot merge dsha states of different algorithms: {self.algorithm} and {other.algorithm}")
        if other.schema_digest != self.schema_digest:
            raise StateError(f"cannot merge dsha states of different schemas: {self.schema} and {other.schema}")
        return DigestState(self.algorithm, self.schema, self.schema_digest, (self.rows + other.rows) % _U64,
                           _add(self.algorithm, self.content_sum, other.content_sum))

    @property
    def _width(self) -> int:
        return BY_ID[self.algorithm].state_bytes

    def multihash(self) -> bytes:
        """The final digest (SPEC.md §6) as a multihash."""
        final = hashlib.sha256(self.algorithm.encode("ascii") + self.schema_digest + struct.pack("<Q", self.rows)
                               + self.content_sum.to_bytes(self._width, "little")).digest()
        return multihash(BY_ID[self.algorithm].code, final)

    @property
    def digest(self) -> str:
        """The digest string: what ``dsha(...)`` returns for the same rows."""
        return "f" + self.multihash().hex()


def multihash(code: int, digest: bytes) -> bytes:
    """A multihash: the code and the digest's length as varints, then the digest."""
    return varint(code) + varint(len(digest)) + digest


class _Reader:
    def __init__(self, data: bytes):
        self.data, self.at = data, 0

    def take(self, n: int, what: str) -> bytes:
        if n > len(self.data) - self.at:
            raise StateError(f"malformed dsha state: truncated: {what} needs {n} bytes at offset {self.at}, "
                             f"but the state has {len(self.data)} bytes")
        out = self.data[self.at:self.at + n]
        self.at += n
        return out

    def u32(self, what: str) -> int:
        return int(struct.unpack("<I", self.take(4, what))[0])

    def varint(self, what: str) -> int:
        value, shift, byte = 0, 0, 0x80
        while byte & 0x80:
            if shift > 56:
                raise StateError(f"malformed dsha state: {what} is a varint longer than 9 bytes")
            byte = self.take(1, what)[0]
            value |= (byte & 0x7F) << shift
            shift += 7
        if byte == 0 and shift > 7:
            raise StateError(f"malformed dsha state: {what} is not a minimal varint (a trailing 0x00 byte)")
        return value


def parse(state: object) -> DigestState:
    """Reads a state (SPEC.md §11.2), checking its magic, lengths, algorithm and schema digest."""
    if not isinstance(state, (bytes, bytearray, memoryview)):
        raise TypeError(f"a dsha state is bytes (from dsha.state or dsha_state), not {type(state).__name__}")
    r = _Reader(bytes(state))
    magic = r.take(len(MAGIC), "the magic")
    if magic != MAGIC:
        raise StateError(f"malformed dsha state: bad magic: a state starts with {MAGIC.hex()} ('DSHS'), "
                         f"this one with {magic.hex()}")
    version = r.take(1, "the format version")[0]
    if version != FORMAT_VERSION:
        raise StateError(f"malformed dsha state: format version {version} is not supported "
                         f"(this dsha reads version {FORMAT_VERSION})")
    code = r.varint("the algorithm code")
    if code not in BY_CODE:
        known = ", ".join(f"{a.id} {c:#x}" for c, a in BY_CODE.items())
        raise StateError(f"malformed dsha state: unknown algorithm code {code:#x} (known: {known})")
    digest = r.take(r.u32("the length of the schema digest"), "the schema digest")
    if len(digest) != _SCHEMA_DIGEST_BYTES:
        raise StateError(f"malformed dsha state: the schema digest has {len(digest)} bytes, not 32")
    rows = struct.unpack("<Q", r.take(8, "the row count"))[0]
    sum_bytes = r.u32("the length of the combiner state")
    algorithm = BY_CODE[code]
    width = algorithm.state_bytes
    if sum_bytes != width:
        raise StateError(f"malformed dsha state: the combiner state of {algorithm.id} has {width} bytes, "
                         f"not {sum_bytes}")
    content_sum = int.from_bytes(r.take(width, "the combiner state"), "little")
    text = r.take(r.u32("the length of the schema text"), "the schema text")
    if r.at != len(r.data):
        raise StateError(f"malformed dsha state: {len(r.data) - r.at} bytes after the end of the state")
    actual = hashlib.sha256(text).digest()
    if actual != digest:
        raise StateError(f"malformed dsha state: the schema text does not match its digest (SHA-256 of the text is "
                         f"{actual.hex()}, the state says {digest.hex()})")
    try:
        schema = text.decode("utf-8")
    except UnicodeDecodeError as e:
        raise StateError(f"malformed dsha state: the schema text is not valid UTF-8 ({e})") from None
    return DigestState(algorithm.id, schema, digest, rows, content_sum)


def merge(states: Iterable[object]) -> bytes:
    """The state of all the states' rows, merged in pure Python (no Spark): same algorithm and schema required."""
    merged: Optional[DigestState] = None
    for i, s in enumerate(states):
        try:
            parsed = parse(s)
        except TypeError as e:
            raise TypeError(f"dsha.merge: state #{i}: {e}") from None
        merged = parsed if merged is None else merged.merge(parsed)
    if merged is None:
        raise ValueError("dsha.merge needs at least one state (the state of zero rows has a schema: "
                         "dsha.state(df) of an empty DataFrame)")
    return merged.to_bytes()

