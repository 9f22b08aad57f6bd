"""Throughput of the Arrow engine per column kind, synthetic tables in memory: python bench/arrow_micro.py [rows]"""
import os
import sys
import time

import numpy as np
import pyarrow as pa

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
import dsha.arrow as da  # noqa: E402


def _rate(name, table, repeat=3):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        da.fingerprint(table)
        best = min(best, time.perf_counter() - t0)
    print(f"{name:40s} {table.num_rows / best:>12,.0f} rows/s")


def main(n):
    rng = np.random.default_rng(0)
    _rate("8 x int64/float64, no nulls", pa.table(
        {**{f"i{k}": rng.integers(-2**62, 2**62, n) for k in range(4)},
         **{f"f{k}": rng.standard_normal(n) for k in range(4)}}))
    ints = rng.integers(0, 100, n)
    _rate("int64 (10% nulls) + double", pa.table(
        {"a": pa.array(ints, mask=rng.random(n) < 0.1), "b": rng.standard_normal(n)}))
    words = np.array(["alpha", "b", "", "a somewhat longer string value here", "日本語"])
    _rate("3 x string (0..35 bytes)", pa.table({f"s{k}": pa.array(words[rng.integers(0, 5, n)]) for k in range(3)}))
    lens = rng.integers(0, 6, n)
    off = pa.array(np.concatenate([[0], np.cumsum(lens)]).astype(np.int32))
    vals = pa.array(rng.integers(0, 1000, int(lens.sum())).astype(np.int32))
    _rate("list<int> (0..5 elements)", pa.table({"l": pa.ListArray.from_arrays(off, vals)}))
    _rate("map<bigint,int> (0..5 entries)", pa.table({"m": pa.MapArray.from_arrays(
        off, pa.array(np.arange(int(lens.sum()), dtype=np.int64)), vals)}))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
