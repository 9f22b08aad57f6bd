"""Two different tables with the same dsha-v1 digest, built in well under a second by inverting MurmurHash3_x64_128
(SPEC.md §8: dsha-v1 is not tamper-evident). No Spark and no dsha code: only SPEC.md §2-§6.

MurmurHash3_x64_128 mixes its input 16 bytes at a time with invertible steps (multiplication by odd constants,
rotations, xors, additions), and its finalisation is invertible too. So for a message whose last 16-byte block is
free, the block can be solved for any chosen 128-bit digest: run the hash forward over the fixed prefix, run the
finalisation backwards from the target, and solve the one block in between.

Tables here have one BINARY column `b` (canonical schema `struct<"b":binary>`). A row's encoding is
schema_digest (32 bytes) || 0x01 || u32 length || the bytes (SPEC §3.1, §4.2); with 11 + 16k bytes the message ends
on a block boundary, and its last 16 bytes are free.
"""
import hashlib
import struct

M64 = (1 << 64) - 1
C1 = 0x87C37B91114253D5
C2 = 0x4CF5AD432745937F
SCHEMA = 'struct<"b":binary>'


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M64


def _rotr(x, r):
    return _rotl(x, 64 - r)


def _inv(a):
    return pow(a, -1, 1 << 64)


def _fmix(k):
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & M64
    return k ^ (k >> 33)


def _unshift(k, s):
    """The inverse of k ^= k >> s."""
    out = k
    for _ in range(64 // s + 1):
        out = k ^ (out >> s)
    return out


def _unfmix(k):
    k = _unshift(k, 33)
    k = (k * _inv(0xC4CEB9FE1A85EC53)) & M64
    k = _unshift(k, 33)
    k = (k * _inv(0xFF51AFD7ED558CCD)) & M64
    return _unshift(k, 33)


def _block(h1, h2, k1, k2):
    """One 16-byte block of the body (k1, k2: its two little-endian words)."""
    k1 = (_rotl((k1 * C1) & M64, 31) * C2) & M64
    h1 ^= k1
    h1 = (_rotl(h1, 27) + h2) & M64
    h1 = (h1 * 5 + 0x52DCE729) & M64
    k2 = (_rotl((k2 * C2) & M64, 33) * C1) & M64
    h2 ^= k2
    h2 = (_rotl(h2, 31) + h1) & M64
    h2 = (h2 * 5 + 0x38495AB5) & M64
    return h1, h2


def _body(data):
    """The state (h1, h2) after the whole blocks of data (a multiple of 16 bytes), seed 0."""
    assert len(data) % 16 == 0
    h1 = h2 = 0
    for i in range(0, len(data), 16):
        k1, k2 = struct.unpack_from("<QQ", data, i)
        h1, h2 = _block(h1, h2, k1, k2)
    return h1, h2


def murmur3_x64_128(data):
    """MurmurHash3_x64_128, seed 0: 16 bytes, h1 then h2 little-endian."""
    whole = len(data) - len(data) % 16
    h1, h2 = _body(data[:whole])
    tail = data[whole:] + bytes(16 - len(data) % 16) if len(data) % 16 else b""
    if tail:
        k1, k2 = struct.unpack("<QQ", tail)
        if len(data) % 16 > 8:
            h2 ^= (_rotl((k2 * C2) & M64, 33) * C1) & M64
        h1 ^= (_rotl((k1 * C1) & M64, 31) * C2) & M64
    return _finish(h1, h2, len(data))


def _finish(h1, h2, length):
    h1 ^= length
    h2 ^= length
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    h1, h2 = _fmix(h1), _fmix(h2)
    h1 = (h1 + h2) & M64
    h2 = (h2 + h1) & M64
    return struct.pack("<QQ", h1, h2)


def _unfinish(digest, length):
    """The state (h1, h2) after the body that finishes into digest, for a message of `length` bytes."""
    o1, o2 = struct.unpack("<QQ", digest)
    h2 = (o2 - o1) & M64
    h1 = (o1 - h2) & M64
    h1, h2 = _unfmix(h1), _unfmix(h2)
    h2 = (h2 - h1) & M64
    h1 = (h1 - h2) & M64
    return h1 ^ length, h2 ^ length


def solve_last_block(prefix, target):
    """The 16 bytes x such that murmur3_x64_128(prefix || x) == target (prefix: whole blocks)."""
    a1, a2 = _body(prefix)
    b1, b2 = _unfinish(target, len(prefix) + 16)
    # h1' = (rotl(a1 ^ K1, 27) + a2) * 5 + c1  =>  K1
    k1m = _rotr(((((b1 - 0x52DCE729) & M64) * _inv(5)) - a2) & M64, 27) ^ a1
    # h2' = (rotl(a2 ^ K2, 31) + h1') * 5 + c2  =>  K2
    k2m = _rotr(((((b2 - 0x38495AB5) & M64) * _inv(5)) - b1) & M64, 31) ^ a2
    k1 = (_rotr((k1m * _inv(C2)) & M64, 31) * _inv(C1)) & M64
    k2 = (_rotr((k2m * _inv(C1)) & M64, 33) * _inv(C2)) & M64
    return struct.pack("<QQ", k1, k2)


def schema_digest():
    return hashlib.sha256(SCHEMA.encode()).digest()


def row_message(value):
    return schema_digest() + b"\x01" + struct.pack("<I", len(value)) + value


def row_digest(value):
    """dsha-v1's row digest of one row (b = value), by SPEC §4.2."""
    return murmur3_x64_128(row_message(value))


def _u128(d):
    return int.from_bytes(d, "little")


def forge(rows, fixed, head=b"forged by k"):
    """A table of len(rows) rows, `fixed` (len(rows) - 1 values) plus one solved value, whose dsha-v1 sum (and so
    digest) equals that of `rows`. The solved value is `head` (11 + 16k bytes) then 16 free bytes."""
    assert len(head) % 16 == 11 and len(fixed) == len(rows) - 1
    target = (sum(_u128(row_digest(v)) for v in rows) - sum(_u128(row_digest(v)) for v in fixed)) % (1 << 128)
    prefix = schema_digest() + b"\x01" + struct.pack("<I", len(head) + 16) + head
    last = head + solve_last_block(prefix, target.to_bytes(16, "little"))
    return list(fixed) + [last]


def colliding_tables():
    """(A, B): two different multisets of BINARY values, of equal size, sharing no value, with one dsha-v1 digest."""
    a = [b"alice pays bob 10", b"carol pays dave 20", b"erin pays frank 30"]
    b = forge(a, [b"mallory pays mallory 1000000", b"carol pays dave 2000"])
    return a, b
