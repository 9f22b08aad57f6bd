"""Sketch sizes (SPEC.md §17.1, §17.4), without numpy: which cell counts are allowed, the folds a decode tries, and
the size a retry takes from an estimate of the difference. Shared by the jar's ``dsha.diff``, the jar-free one and
the Arrow engine's."""
from __future__ import annotations

import math
from typing import List

__all__ = ["MAX_CELLS", "cells_for", "fallback_method", "fold_sizes", "next_size", "sketch_method", "valid_cells"]

MAX_CELLS = 1 << 24


def valid_cells(m: object) -> bool:
    """Whether ``m`` is an allowed sketch size: 2^i or 3·2^i, 1 ≤ m ≤ 2^24."""
    if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= MAX_CELLS:
        return False
    return m // (m & -m) in (1, 3)


def fold_sizes(m: int) -> List[int]:
    """The allowed sizes dividing ``m``, increasing: the folds a decode tries (SPEC.md §17.4)."""
    return sorted({s for base in (1, 3) for s in (base << i for i in range(25)) if s <= m and m % s == 0})


def cells_for(distinct: int) -> int:
    """The smallest allowed sketch size (2^i or 3·2^i) with 1.5 cells per differing row digest."""
    want, n = max(1, int(1.5 * distinct) + 1), 1
    while True:  # n, then 3n/2 (3·2^(i-1)): every allowed size in increasing order, beyond 2^24 too
        for size in (n, 3 * n // 2 if n >= 2 else n):
            if size >= want:
                return size
        n *= 2


def next_size(estimate: int, m: int) -> int:
    """The size of the next sketch after one of ``m`` cells did not decode a difference estimated at ``estimate``
    distinct digests: 1.5 cells per digest, and at least twice ``m`` (8 times when no cell was left zero: the
    estimate is then only a lower bound)."""
    saturated = estimate >= (m / 3) * math.log(2 * m) - 1
    return max(cells_for(estimate), (8 if saturated else 2) * m)


def sketch_method(passes: int) -> str:
    """A diff's ``method`` when a sketch decoded the difference, after ``passes`` sketch passes."""
    return "sketch" if passes == 1 else f"sketch ({passes} passes)"


def fallback_method(estimate: int, max_cells: int) -> str:
    """A diff's ``method`` when no sketch of at most ``max_cells`` cells decodes a difference estimated at
    ``estimate`` distinct rows: the join (or count) of per-digest counts."""
    return (f"join of per-digest counts (the difference, about {estimate:,} distinct rows or more, needs more than "
            f"max_cells={max_cells:,} sketch cells)")
