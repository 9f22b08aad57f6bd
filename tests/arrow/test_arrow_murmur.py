import os

import mmh3
import numpy as np
from hypothesis import given, settings, strategies as st

from dsha.arrow import _murmur as M


def _check(strs, prefix=b""):
    offs = np.cumsum([0] + [len(s) for s in strs])
    h0 = M.prefix_state(prefix) if prefix else (0, 0)
    h1, h2 = M.hash_many(b"".join(strs), offs, h0, len(prefix))
    d = M.digests_to_bytes(h1, h2)
    for i, s in enumerate(strs):
        assert bytes(d[i]) == mmh3.hash_bytes(prefix + s, 0, x64arch=True), (i, s)


def test_every_length_0_to_200():
    _check([os.urandom(i) for i in range(201)])
    _check([os.urandom(i) for i in range(201)], prefix=os.urandom(32))


def test_uniform_matrix_every_length():
    p = os.urandom(32)
    h0 = M.prefix_state(p)
    for length in range(0, 70):
        mat = np.frombuffer(os.urandom(length * 4), np.uint8).reshape(4, length)
        pad = np.zeros((4, (length // 16 + 1) * 16), np.uint8)
        pad[:, :length] = mat
        d = M.digests_to_bytes(*M.hash_matrix(pad, length, h0, 32))
        for i in range(4):
            assert bytes(d[i]) == mmh3.hash_bytes(p + bytes(mat[i]), 0, x64arch=True)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=100), max_size=30))
def test_random_batches(strs):
    _check(strs)
    _check(strs, prefix=b"\x07" * 32)


def test_sums():
    rng = np.random.default_rng(1)
    h1 = rng.integers(0, 2**63, 1000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    h2 = rng.integers(0, 2**63, 1000, dtype=np.uint64) * np.uint64(2)
    want = sum(int(a) + (int(b) << 64) for a, b in zip(h1, h2)) % (1 << 128)
    assert M.sum128(h1, h2) == want
    starts = np.array([0, 5, 5, 100, 0])
    ends = np.array([5, 5, 100, 1000, 1000])
    lo, hi = M.segmented_sum128(h1, h2, starts, ends)
    for i in range(len(starts)):
        w = sum(int(a) + (int(b) << 64) for a, b in zip(h1[starts[i]:ends[i]], h2[starts[i]:ends[i]])) % (1 << 128)
        assert int(lo[i]) + (int(hi[i]) << 64) == w


def test_scatter_in_steps(monkeypatch):
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 50, 300)
    lengths[7] = 500  # longer than a step
    src = rng.integers(0, 256, int(lengths.sum()) + 100, dtype=np.uint8)
    src_starts = np.cumsum(lengths) - lengths + rng.integers(0, 2, 300) * 0
    src_starts[5:] += 3  # not contiguous
    src = np.concatenate([src, np.zeros(10, np.uint8)])
    dst_starts = np.cumsum(lengths + 5) - lengths
    want = np.zeros(int(dst_starts[-1] + lengths[-1]) + 5, np.uint8)
    for d, s, ln in zip(dst_starts, src_starts, lengths):
        want[d:d + ln] = src[s:s + ln]
    for step in (1 << 22, 64, 1):
        monkeypatch.setattr(M, "SCATTER_STEP", step)
        got = np.zeros_like(want)
        M.scatter_segments(got, dst_starts, src, src_starts, lengths)
        assert np.array_equal(got, want)
        got = np.zeros_like(want)
        contiguous = np.cumsum(lengths) - lengths
        M.scatter_segments(got, dst_starts, src, contiguous, lengths)
        want2 = np.zeros_like(want)
        for d, s, ln in zip(dst_starts, contiguous, lengths):
            want2[d:d + ln] = src[s:s + ln]
        assert np.array_equal(got, want2)
