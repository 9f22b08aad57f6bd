"""The tamper-evident algorithms on Arrow data (SPEC.md §16), from the secure encoding of each row
(``_secure_encode``): a row function per algorithm and its combiner, giving a batch's row count and combiner state
(the integer ``DigestState.content_sum`` holds).

* dsha-keyed-v1 (§16.2): HMAC-SHA-256 under the key of ``schema_digest || row``, summed mod 2^256;
* dsha-keyed-v2 (§16.6): subkeys once per table from the key and the schema digest; per row NH (vectorised with
  numpy: rows of one block count as a matrix, 64x64-bit products in 32-bit halves), a polynomial mod 2^127 - 1 and
  AES-256 of two blocks (all rows of a batch in one AES call), summed mod 2^256;
* dsha-secure-v1 (§16.3): SHA-256 of ``schema_digest || row`` seeds 4096 bytes of AES-256-CTR, 512 lanes of 64 bits
  summed lane by lane (numpy wraps mod 2^64);
* dsha-secure-v2 (§16.7): the same seed's halves, each exclusive-ored with 0 .. 127, enciphered by AES-128 under two
  keys fixed per table; 256 lanes. The keys do not change from row to row, so the blocks of thousands of rows go
  through one ECB call per key (built and summed with numpy): no Python loop but SHA-256's.

AES is the ``cryptography`` package's (the arrow extra installs it); hashing is ``hashlib``/``hmac``.
"""
from __future__ import annotations

import hashlib
import hmac
from typing import Any, Dict, Iterator, List, Tuple

import numpy as np

from dsha.core.algorithms import BY_ID
from dsha.errors import MissingDependencyError

__all__ = ["ROW_FUNCTIONS", "RowFunction", "row_function", "subkey_seed"]

_M64 = (1 << 64) - 1
_M128 = (1 << 128) - 1
_M256 = (1 << 256) - 1
_P = (1 << 127) - 1
_LANES = 512
_STREAM = 8 * _LANES  # dsha-secure-v1's 4096 bytes per row
_ZEROS = bytes(_STREAM)
_CTR_ZERO = bytes(16)
_LANES_V2 = 256
_BLOCKS_V2 = 128  # dsha-secure-v2's 16-byte blocks per row (2048 bytes)
_CHUNK_V2 = 1024  # rows per AES call: 2 MiB of cipher input per key (faster than larger or smaller chunks)
_J_V2 = np.zeros((_BLOCKS_V2, 2), dtype="<u8")  # block j: j in its last byte (the top byte of its second u64 LE)
_J_V2[:, 1] = np.arange(_BLOCKS_V2, dtype=np.uint64) << np.uint64(56)


def _aes() -> Tuple[Any, Any, Any]:
    """``cryptography``'s Cipher, algorithms and modes, or an error naming the extra that installs it."""
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    except ImportError:
        raise MissingDependencyError(
            "dsha-keyed-v2, dsha-secure-v1 and dsha-secure-v2 need AES from the cryptography package, which dsha's "
            'arrow extra installs: pip install "./python[arrow]" (or pip install cryptography)') from None
    return Cipher, algorithms, modes


def _ctr_stream(key: bytes, length: int) -> bytes:
    """The AES-256-CTR keystream under ``key``: block j is AES-256_key(j as 16 bytes big-endian), j = 0, 1, ..."""
    cipher, algorithms, modes = _aes()
    return bytes(cipher(algorithms.AES(key), modes.CTR(_CTR_ZERO)).encryptor().update(bytes(length)))


def subkey_seed(key: bytes, schema_digest: bytes) -> bytes:
    """dsha-keyed-v2's seed of a table's subkeys (SPEC.md §16.6): HMAC-SHA-256(K, "dsha-keyed-v2" || schema_digest)."""
    return hmac.new(key, b"dsha-keyed-v2" + schema_digest, hashlib.sha256).digest()


class RowFunction:
    """One algorithm's row function under one schema digest (and key): ``values`` gives each row's value (row MAC,
    seed or row value, as the golden vectors list them), ``combine`` a batch's combiner state."""

    algorithm = ""

    def __init__(self, schema_digest: bytes, key: bytes = b"", seeded: bool = False):
        self.schema_digest = schema_digest

    def values(self, offsets: np.ndarray, data: bytes) -> List[bytes]:
        raise NotImplementedError

    def combine(self, offsets: np.ndarray, data: bytes) -> int:
        """The batch's combiner state: the sum mod 2^256 of the row values read little-endian."""
        return sum(int.from_bytes(v, "little") for v in self.values(offsets, data)) & _M256


def _digests(prefixed: Any, offsets: np.ndarray, data: bytes) -> List[bytes]:
    """Each row's digest by a hash (or HMAC) object that has taken the schema digest: copied per row."""
    bounds = offsets.tolist()
    out = []
    for i in range(len(bounds) - 1):
        h = prefixed.copy()
        h.update(data[bounds[i]:bounds[i + 1]])
        out.append(h.digest())
    return out


class KeyedV1(RowFunction):
    """dsha-keyed-v1 (SPEC.md §16.2): row_mac = HMAC-SHA-256(K, schema_digest || row)."""

    algorithm = "dsha-keyed-v1"

    def __init__(self, schema_digest: bytes, key: bytes = b"", seeded: bool = False):
        super().__init__(schema_digest, key)
        self._prefixed = hmac.new(key, schema_digest, hashlib.sha256)  # copied per row: the key's pads once

    def values(self, offsets: np.ndarray, data: bytes) -> List[bytes]:
        return _digests(self._prefixed, offsets, data)


class SecureV1(RowFunction):
    """dsha-secure-v1 (SPEC.md §16.3): seed = SHA-256(schema_digest || row); lanes from AES-256-CTR under it."""

    algorithm = "dsha-secure-v1"

    def __init__(self, schema_digest: bytes, key: bytes = b"", seeded: bool = False):
        super().__init__(schema_digest, key)
        self._prefixed = hashlib.sha256(schema_digest)

    def values(self, offsets: np.ndarray, data: bytes) -> List[bytes]:
        """The rows' seeds (what the golden vectors list)."""
        return _digests(self._prefixed, offsets, data)

    def combine(self, offsets: np.ndarray, data: bytes) -> int:
        """The lane-wise sums, as the integer of their 4096 bytes read little-endian (``DigestState``)."""
        cipher, algorithms, modes = _aes()
        ctr = modes.CTR(_CTR_ZERO)
        lanes = np.zeros(_LANES, dtype=np.uint64)
        seeds = self.values(offsets, data)
        for at in range(0, len(seeds), 256):  # 1 MiB of keystream at a time
            chunk = seeds[at:at + 256]
            stream = b"".join(cipher(algorithms.AES(s), ctr).encryptor().update(_ZEROS) for s in chunk)
            lanes += np.frombuffer(stream, dtype="<u8").reshape(len(chunk), _LANES).sum(axis=0, dtype=np.uint64)
        return int.from_bytes(lanes.astype("<u8").tobytes(), "little")


class SecureV2(RowFunction):
    """dsha-secure-v2 (SPEC.md §16.7): K_1 || K_2 = SHA-256("dsha-secure-v2" || schema_digest); per row
    seed = SHA-256(schema_digest || row) = a || b and X_j = AES-128_K1(a ^ <j>) ^ AES-128_K2(b ^ <j>), j < 128.

    The keys are the table's, so ``_CHUNK_V2`` rows' blocks go through one ECB call per key: each row's half copied
    128 times, then exclusive-ored with the blocks' j (the top byte of the second little-endian u64 word is a block's
    last byte), enciphered into buffers allocated once per batch (fresh megabytes per call cost more than the AES).
    A row costs the Python loop of SHA-256 (about half a microsecond) and under a microsecond of AES and numpy."""

    algorithm = "dsha-secure-v2"

    def __init__(self, schema_digest: bytes, key: bytes = b"", seeded: bool = False):
        super().__init__(schema_digest, key)
        keys = hashlib.sha256(b"dsha-secure-v2" + schema_digest).digest()
        self._prefixed = hashlib.sha256(schema_digest)
        cipher, algorithms, modes = _aes()
        self._ciphers = tuple(cipher(algorithms.AES(k), modes.ECB()) for k in (keys[:16], keys[16:]))  # K_1, K_2

    def _seeds(self, offsets: np.ndarray, data: bytes) -> bytes:
        """The rows' seeds (dsha-secure-v1's), concatenated: 32 bytes each."""
        return b"".join(_digests(self._prefixed, offsets, data))

    def _lanes(self, seeds: bytes) -> Iterator[np.ndarray]:
        """The lanes of the rows of these seeds, ``_CHUNK_V2`` rows at a time: rows x 256 u64 (each row's 2048-byte
        stream read little-endian), a view of a buffer that the next chunk overwrites."""
        rows = len(seeds) // 32
        chunk = max(1, min(rows, _CHUNK_V2))
        halves = np.frombuffer(seeds, dtype="V16").reshape(rows, 2)  # a, b: 16 bytes each
        blocks = np.empty((chunk, _BLOCKS_V2, 2), dtype="<u8")
        whole = blocks.view("V16").reshape(chunk, _BLOCKS_V2)
        size = 8 * _LANES_V2 * chunk
        buffers = (bytearray(size + 15), bytearray(size + 15))  # update_into wants a block's slack
        out = [np.frombuffer(buf, dtype="<u8", count=_LANES_V2 * chunk).reshape(chunk, _LANES_V2) for buf in buffers]
        encryptors = [c.encryptor() for c in self._ciphers]
        for at in range(0, rows, chunk):
            part = halves[at:at + chunk]
            n = len(part)
            for half in (0, 1):
                np.copyto(whole[:n], part[:, half, None])  # the half 128 times (a 16-byte copy, no arithmetic)
                np.bitwise_xor(blocks[:n], _J_V2, out=blocks[:n])  # then j into every block's last byte
                encryptors[half].update_into(blocks[:n], buffers[half])
            yield np.bitwise_xor(out[0][:n], out[1][:n], out=out[0][:n])

    def values(self, offsets: np.ndarray, data: bytes) -> List[bytes]:
        """Each row's 2048-byte stream (the golden vectors list their SHA-256)."""
        return [row.tobytes() for lanes in self._lanes(self._seeds(offsets, data)) for row in lanes]

    def combine(self, offsets: np.ndarray, data: bytes) -> int:
        """The lane-wise sums, as the integer of their 2048 bytes read little-endian (``DigestState``)."""
        total = np.zeros(_LANES_V2, dtype=np.uint64)
        for lanes in self._lanes(self._seeds(offsets, data)):
            total += lanes.sum(axis=0, dtype=np.uint64)  # wraps mod 2^64
        return int.from_bytes(total.astype("<u8").tobytes(), "little")


class KeyedV2(RowFunction):
    """dsha-keyed-v2 (SPEC.md §16.6): NH under the key words k_i, the polynomial in r mod 2^127 - 1, AES-256 under E."""

    algorithm = "dsha-keyed-v2"

    def __init__(self, schema_digest: bytes, key: bytes = b"", seeded: bool = False):
        super().__init__(schema_digest, key)
        # seeded: ``key`` is already the table's seed (what the jar-free path sends executors instead of the key)
        self._seed = key if seeded else subkey_seed(key, schema_digest)
        head = _ctr_stream(self._seed, 48)
        self._r = (int.from_bytes(head[:16], "little") & ((1 << 127) - 1)) % _P
        cipher, algorithms, modes = _aes()
        self._aes = cipher(algorithms.AES(head[16:48]), modes.ECB())
        self._words = np.zeros(0, dtype=np.uint64)

    def _key_words(self, count: int) -> np.ndarray:
        """k_0 .. k_{count-1} (the stream from byte 48 on), extended as longer rows need them."""
        if len(self._words) < count:
            grown = max(count, 2 * len(self._words), 64)
            stream = _ctr_stream(self._seed, 48 + 8 * grown)
            self._words = np.frombuffer(stream[48:], dtype="<u8").astype(np.uint64)
        return self._words[:count]

    def _nh(self, words: np.ndarray, blocks: int) -> Tuple[Any, Any]:
        """NH_0 and NH_1 of rows of ``blocks`` 16-byte blocks (``words``: rows x 2*blocks u64), as object arrays of
        Python ints. Each 64x64-bit product is taken in 32-bit halves, every partial sum exact in u64."""
        k = self._key_words(2 * blocks + 2)
        out = []
        for j in (0, 1):
            a = words[:, 0::2] + k[2 * j:2 * j + 2 * blocks:2]  # wraps mod 2^64, as NH says
            b = words[:, 1::2] + k[2 * j + 1:2 * j + 1 + 2 * blocks:2]
            a0, a1 = a & np.uint64(0xFFFFFFFF), a >> np.uint64(32)
            b0, b1 = b & np.uint64(0xFFFFFFFF), b >> np.uint64(32)
            p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
            lo, sh = np.uint64(0xFFFFFFFF), np.uint64(32)
            s0 = (p00 & lo).sum(axis=1, dtype=np.uint64)
            s1 = ((p00 >> sh) + (p01 & lo) + (p10 & lo)).sum(axis=1, dtype=np.uint64)
            s2 = ((p01 >> sh) + (p10 >> sh) + (p11 & lo)).sum(axis=1, dtype=np.uint64)
            s3 = (p11 >> sh).sum(axis=1, dtype=np.uint64)
            obj = [s.astype(object) for s in (s0, s1, s2, s3)]
            out.append((obj[0] + (obj[1] << 32) + (obj[2] << 64) + (obj[3] << 96)) & _M128)
        return out[0], out[1]

    def _u(self, offsets: np.ndarray, data: bytes) -> List[int]:
        """u of every row (the polynomial of the NH words and the row length, mod p)."""
        n = len(offsets) - 1
        lengths = np.diff(offsets)
        blocks = (lengths + 15) // 16
        flat = np.frombuffer(data, dtype=np.uint8)
        u: List[int] = [0] * n
        r = self._r
        for count in np.unique(blocks).tolist():
            rows = np.nonzero(blocks == count)[0]
            if count == 0:
                nh0 = nh1 = np.zeros(len(rows), dtype=object)
            else:
                padded = np.zeros((len(rows), 16 * count), dtype=np.uint8)
                cols = np.arange(16 * count)
                inside = cols[None, :] < lengths[rows][:, None]
                padded[inside] = flat[(offsets[rows][:, None] + cols[None, :])[inside]]
                nh0, nh1 = self._nh(padded.view("<u8").astype(np.uint64), count)
            for i, h0, h1 in zip(rows.tolist(), nh0.tolist(), nh1.tolist()):
                acc = 0
                for a in (h0 & _M64, h0 >> 64, h1 & _M64, h1 >> 64, int(lengths[i])):
                    acc = (acc + a) * r % _P  # Horner: a_0 r^5 + a_1 r^4 + a_2 r^3 + a_3 r^2 + a_4 r
                u[i] = acc
        return u

    def values(self, offsets: np.ndarray, data: bytes) -> List[bytes]:
        blocks = b"".join(x.to_bytes(16, "little") + (x + (1 << 127)).to_bytes(16, "little")
                          for x in self._u(offsets, data))
        out = self._aes.encryptor().update(blocks)
        return [out[i:i + 32] for i in range(0, len(out), 32)]


ROW_FUNCTIONS: Dict[str, type] = {f.algorithm: f for f in (KeyedV1, KeyedV2, SecureV1, SecureV2)}


def row_function(algorithm: str, schema_digest: bytes, key: bytes = b"", seeded: bool = False) -> RowFunction:
    """The row function of a tamper-evident algorithm (``key`` for the keyed ones: checked by the caller; ``seeded``:
    for dsha-keyed-v2, ``key`` is the table's subkey seed)."""
    if algorithm not in ROW_FUNCTIONS:
        raise ValueError(f"unknown dsha algorithm {algorithm!r} (the Arrow engine computes "
                         f"{', '.join(['dsha-v1', *ROW_FUNCTIONS])})")
    if BY_ID[algorithm].keyed != bool(key):
        raise ValueError(f"{algorithm} {'needs' if BY_ID[algorithm].keyed else 'takes no'} key")
    return ROW_FUNCTIONS[algorithm](schema_digest, key, seeded)  # type: ignore[no-any-return]
