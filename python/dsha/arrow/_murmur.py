"""Vectorised MurmurHash3_x64_128 (SPEC.md §4.1) over many byte strings at once, in numpy uint64 arithmetic.

Strings are laid out *padded* (``hash_joined``: Arrow joins each row with zero bytes, in C++): each starts at a
multiple of 16 bytes and is followed by zero bytes up to ``(len // 16 + 1) * 16``. Every string then has ``len //
16`` full blocks and one zero-padded tail block, which is
processed unconditionally: zero tail words are a no-op in MurmurHash3's tail step, so only the finalisation needs
the true length. A common prefix (the 32-byte schema digest, two blocks) is hashed once and the state continued.
"""
from __future__ import annotations

from typing import List, Tuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_U64 = np.uint64
C1 = _U64(0x87C37B91114253D5)
C2 = _U64(0x4CF5AD432745937F)
_F1 = _U64(0xFF51AFD7ED558CCD)
_F2 = _U64(0xC4CEB9FE1A85EC53)
_M5 = _U64(5)
_N1 = _U64(0x52DCE729)
_N2 = _U64(0x38495AB5)
_S33 = _U64(33)
_MASK64 = (1 << 64) - 1


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << _U64(r)) | (x >> _U64(64 - r))


def _mix_k1(k1: np.ndarray) -> np.ndarray:
    k1 = k1 * C1
    k1 = _rotl(k1, 31)
    return k1 * C2


def _mix_k2(k2: np.ndarray) -> np.ndarray:
    k2 = k2 * C2
    k2 = _rotl(k2, 33)
    return k2 * C1


def _block(h1: np.ndarray, h2: np.ndarray, k1: np.ndarray, k2: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    h1 = h1 ^ _mix_k1(k1)
    h1 = _rotl(h1, 27)
    h1 = h1 + h2
    h1 = h1 * _M5 + _N1
    h2 = h2 ^ _mix_k2(k2)
    h2 = _rotl(h2, 31)
    h2 = h2 + h1
    h2 = h2 * _M5 + _N2
    return h1, h2


def prefix_state(prefix: bytes) -> Tuple[int, int]:
    """(h1, h2) after the full 16-byte blocks of ``prefix`` (whose length must be a multiple of 16), seed 0."""
    if len(prefix) % 16:
        raise ValueError("the prefix must be a whole number of 16-byte blocks")
    words = np.frombuffer(prefix, dtype="<u8").astype(np.uint64)
    h1 = np.zeros(1, np.uint64)
    h2 = np.zeros(1, np.uint64)
    for j in range(len(words) // 2):
        h1, h2 = _block(h1, h2, words[2 * j:2 * j + 1], words[2 * j + 1:2 * j + 2])
    return int(h1[0]), int(h2[0])


def hash_matrix(mat: np.ndarray, length: int, h0: Tuple[int, int] = (0, 0), extra_len: int = 0
                ) -> Tuple[np.ndarray, np.ndarray]:
    """Hashes the rows of ``mat``, an (n, P) uint8 matrix whose rows are byte strings of ``length`` bytes padded with
    zeros to P = (length // 16 + 1) * 16, continuing from state ``h0`` after ``extra_len`` prefix bytes.
    Returns (h1, h2) uint64 arrays."""
    n = mat.shape[0]
    words = np.ascontiguousarray(mat).view("<u8").astype(np.uint64, copy=False)
    return _rounds(words, length // 16, h0, np.full(n, length + extra_len, dtype=np.uint64))


def hash_blocks(mat: np.ndarray, blocks: int, lengths: np.ndarray, h0: Tuple[int, int] = (0, 0),
                extra_len: int = 0) -> Tuple[np.ndarray, np.ndarray]:
    """Hashes the rows of ``mat`` (m, (blocks + 1) * 16) uint8, each ``blocks`` full blocks then a zero-padded tail
    block, of the given true ``lengths``, continuing from state ``h0`` after ``extra_len`` prefix bytes."""
    return _rounds(mat.view("<u8"), blocks, h0, lengths.astype(np.uint64) + _U64(extra_len))


def _rotl_(x: np.ndarray, r: int, tmp: np.ndarray) -> None:
    """x = rotl(x, r) in place (``tmp``: scratch of x's shape)."""
    np.left_shift(x, _U64(r), out=tmp)
    np.right_shift(x, _U64(64 - r), out=x)
    np.bitwise_or(x, tmp, out=x)


def _lane(h: np.ndarray, other: np.ndarray, word: np.ndarray, ca: np.uint64, cb: np.uint64, rk: int, rh: int,
          add: np.uint64, k: np.ndarray, tmp: np.ndarray, tail: bool) -> None:
    """One half of a block (``_block``), in place: h ^= mix(word); then, unless in the tail, h = rotl(h) + other,
    h = h * 5 + add (``k``, ``tmp``: scratch)."""
    np.multiply(word, ca, out=k)
    _rotl_(k, rk, tmp)
    k *= cb
    h ^= k
    if not tail:
        _rotl_(h, rh, tmp)
        h += other
        h *= _M5
        h += add


def _rounds(words: np.ndarray, blocks: int, h0: Tuple[int, int], total_len: np.ndarray
            ) -> Tuple[np.ndarray, np.ndarray]:
    """MurmurHash3 of the rows of ``words`` (m, 2 * (blocks + 1)) uint64: ``blocks`` full blocks (as ``_block``),
    the zero-padded tail block, the finalisation; in place on preallocated arrays, so that a block's dozen numpy
    operations allocate nothing (the temporaries cost about as much as the arithmetic)."""
    m = len(words)
    h1 = np.full(m, h0[0], dtype=np.uint64)
    h2 = np.full(m, h0[1], dtype=np.uint64)
    k, tmp = np.empty(m, np.uint64), np.empty(m, np.uint64)
    for j in range(blocks + 1):
        tail = j == blocks  # the zero-padded tail block: mixed in without the rotations (the reference's tail step)
        _lane(h1, h2, words[:, 2 * j], C1, C2, 31, 27, _N1, k, tmp, tail)
        _lane(h2, h1, words[:, 2 * j + 1], C2, C1, 33, 31, _N2, k, tmp, tail)
    h1 ^= total_len
    h2 ^= total_len
    h1 += h2
    h2 += h1
    for h in (h1, h2):
        np.right_shift(h, _S33, out=tmp)
        h ^= tmp
        h *= _F1
        np.right_shift(h, _S33, out=tmp)
        h ^= tmp
        h *= _F2
        np.right_shift(h, _S33, out=tmp)
        h ^= tmp
    h1 += h2
    h2 += h1
    return h1, h2


def large_binary(offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    """A large_binary array over numpy buffers, without copying them."""
    return pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(offsets) - 1,
                                            [None, pa.py_buffer(np.ascontiguousarray(offsets, dtype=np.int64)),
                                             pa.py_buffer(np.ascontiguousarray(data))])


def hash_joined(pieces: List[pa.Array], lengths: np.ndarray, h0: Tuple[int, int] = (0, 0), extra_len: int = 0
                ) -> Tuple[np.ndarray, np.ndarray]:
    """Hashes the row-wise concatenations of ``pieces`` (large_binary arrays of n rows; row i is ``lengths[i]``
    bytes): Arrow joins each row and a zero pad that makes it a whole number of 16-byte blocks with at least one
    zero byte, in one C++ pass; rows of the same block count are then hashed together as a matrix, column by
    column. Returns (h1, h2) in row order."""
    n = len(lengths)
    pad = 16 - lengths % 16
    pad_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(pad, out=pad_offsets[1:])
    pad_piece = large_binary(pad_offsets, np.zeros(int(pad_offsets[-1]), dtype=np.uint8))
    rows = pc.binary_join_element_wise(*pieces, pad_piece, pa.scalar(b"", pa.large_binary()))
    blocks = lengths // 16
    # block counts are small: as uint16, numpy's stable sort is a radix sort, several times faster than on int64
    key = blocks.astype(np.uint16) if n and int(blocks.max()) < (1 << 16) else blocks
    order = np.argsort(key, kind="stable")
    grouped = rows.take(pa.array(order)) if n > 1 else rows
    # Arrow allocates buffers 64-byte aligned, and every row is a multiple of 16 bytes: each row starts aligned
    offsets = np.frombuffer(grouped.buffers()[1], dtype=np.int64, count=grouped.offset + n + 1)[grouped.offset:]
    data = np.frombuffer(grouped.buffers()[2], dtype=np.uint8) if n else np.zeros(0, dtype=np.uint8)
    sorted_blocks, sorted_lengths = blocks[order], lengths[order]
    cuts = np.flatnonzero(np.diff(sorted_blocks)) + 1
    h1, h2 = np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.uint64)
    for lo, hi in zip(np.concatenate([[0], cuts]).astype(np.int64), np.concatenate([cuts, [n]]).astype(np.int64)):
        if hi == lo:
            continue
        k = int(sorted_blocks[lo])
        mat = data[offsets[lo]:offsets[hi]].reshape(hi - lo, (k + 1) * 16)
        h1[order[lo:hi]], h2[order[lo:hi]] = hash_blocks(mat, k, sorted_lengths[lo:hi], h0, extra_len)
    return h1, h2


def hash_many(data: bytes | np.ndarray, offsets: np.ndarray, h0: Tuple[int, int] = (0, 0), extra_len: int = 0
              ) -> Tuple[np.ndarray, np.ndarray]:
    """Hashes the byte strings ``data[offsets[i]:offsets[i+1]]`` (a flat buffer and n+1 offsets)."""
    src = np.frombuffer(data, dtype=np.uint8) if isinstance(data, (bytes, bytearray, memoryview)) else data
    offsets = np.asarray(offsets, dtype=np.int64)
    return hash_joined([large_binary(offsets, src)], np.diff(offsets), h0, extra_len)


# Bytes moved per vectorised step of scatter_segments: its int64 index arrays take 8 bytes per byte moved, so the
# work is split into steps of at most this many bytes to keep memory bounded (a longer single segment is one copy).
SCATTER_STEP = 1 << 22


def scatter_segments(dst: np.ndarray, dst_starts: np.ndarray, src: np.ndarray, src_starts: np.ndarray,
                     lengths: np.ndarray) -> None:
    """dst[dst_starts[i] + k] = src[src_starts[i] + k] for k < lengths[i], for all i, without a Python loop over the
    segments (but in steps of about SCATTER_STEP bytes)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    n = len(lengths)
    if n == 0:
        return
    dst_starts = np.asarray(dst_starts, np.int64)
    src_starts = np.asarray(src_starts, np.int64)
    ends = np.cumsum(lengths)
    total = int(ends[-1])
    if total <= SCATTER_STEP:
        _scatter(dst, dst_starts, src, src_starts, lengths, ends - lengths, total)
        return
    i0 = 0
    while i0 < n:
        before = int(ends[i0] - lengths[i0])
        i1 = int(np.searchsorted(ends, before + SCATTER_STEP, side="right"))
        if i1 <= i0:  # one segment longer than a step: a plain copy
            d, s_, one = int(dst_starts[i0]), int(src_starts[i0]), int(lengths[i0])
            dst[d:d + one] = src[s_:s_ + one]
            i1 = i0 + 1
        else:
            ln = lengths[i0:i1]
            _scatter(dst, dst_starts[i0:i1], src, src_starts[i0:i1], ln, ends[i0:i1] - ln - before,
                     int(ends[i1 - 1]) - before)
        i0 = i1


def _scatter(dst: np.ndarray, dst_starts: np.ndarray, src: np.ndarray, src_starts: np.ndarray, lengths: np.ndarray,
             seg_begin: np.ndarray, total: int) -> None:
    if total == 0:
        return
    # int32 indices where they fit: half the memory and bandwidth of int64
    it = np.int32 if max(dst.size, src.size) < (1 << 31) else np.int64
    s0 = int(src_starts[0])
    if len(lengths) == 1 or np.array_equal(src_starts[1:] - s0, seg_begin[1:]):
        # the segments are contiguous in src (the common case): read src as one slice
        idx = np.repeat((dst_starts - seg_begin).astype(it), lengths)
        idx += np.arange(total, dtype=it)
        dst[idx] = src[s0:s0 + total]
        return
    within = np.arange(total, dtype=it)
    within -= np.repeat(seg_begin.astype(it), lengths)
    dst[np.repeat(dst_starts.astype(it), lengths) + within] = src[np.repeat(src_starts.astype(it), lengths) + within]


def digests_to_bytes(h1: np.ndarray, h2: np.ndarray) -> np.ndarray:
    """(n, 16) uint8: h1 little-endian then h2 little-endian (SPEC.md §4.1)."""
    out = np.empty((len(h1), 2), dtype="<u8")
    out[:, 0] = h1
    out[:, 1] = h2
    return out.view(np.uint8).reshape(len(h1), 16)


def _limbs(h1: np.ndarray, h2: np.ndarray) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    m = _U64(0xFFFFFFFF)
    s = _U64(32)
    return h1 & m, h1 >> s, h2 & m, h2 >> s


def sum128(h1: np.ndarray, h2: np.ndarray) -> int:
    """Σ (h1 + 2^64·h2) mod 2^128, as a Python int."""
    total = 0
    step = 1 << 30  # keep every limb sum below 2^64
    for i in range(0, len(h1), step):
        l0, l1, l2, l3 = _limbs(h1[i:i + step], h2[i:i + step])
        total += (int(l0.sum()) + (int(l1.sum()) << 32) + (int(l2.sum()) << 64) + (int(l3.sum()) << 96))
    return total % (1 << 128)


def segmented_sum128(h1: np.ndarray, h2: np.ndarray, seg_starts: np.ndarray, seg_ends: np.ndarray
                     ) -> Tuple[np.ndarray, np.ndarray]:
    """Per segment [seg_starts[i], seg_ends[i]) of the digests, Σ mod 2^128 as (lo, hi) uint64 arrays."""
    m = _U64(0xFFFFFFFF)
    s = _U64(32)
    out = []
    carry = np.zeros(len(seg_starts), dtype=np.uint64)
    for limb in _limbs(h1, h2):
        cs = np.zeros(len(limb) + 1, dtype=np.uint64)
        np.cumsum(limb, out=cs[1:])
        v = cs[seg_ends] - cs[seg_starts] + carry
        out.append(v & m)
        carry = v >> s
    lo = out[0] | (out[1] << s)
    hi = out[2] | (out[3] << s)
    return lo, hi
