package io.dsha.sketch;

import io.dsha.hash.UInt128;

/**
 * The cells of a dsha sketch (SPEC.md §17): an invertible Bloom lookup table (Eppstein, Goodrich, Uyeda and Varghese,
 * "What's the Difference?", SIGCOMM 2011) over 128-bit row digests, with cells that add and a size that folds.
 *
 * <p>A cell is six words: a signed count, a 192-bit two's complement sum of digests (three words, low first), a 64-bit
 * sum of check words and a 64-bit sum of the rows' filter words (SPEC.md §17.2.1: what lets the rows of a decoded
 * digest be found without hashing every row). Exact integer sums (not XOR, not mod 2^128) let a cell that holds one digest {@code x},
 * {@code c} times, give back both {@code x} and {@code c}: a row three times on one side and once on the other decodes
 * as +2 instead of cancelling.
 *
 * <p>A digest goes into {@link #HASHES} cells, {@code r_j mod m} for three random words r_j of the digest. When m' divides
 * m, {@code (r mod m) mod m' = r mod m'}: adding the cells of a sketch whose indices agree mod m' gives exactly the
 * sketch of m' cells ({@link #fold}). So a sketch is computed once, large, and decoded at the smallest size that works
 * (sizes 2^i and 3·2^i), without knowing beforehand how many rows differ; three updates per row, not the ~2 ln m of a
 * rateless IBLT (SPEC.md §17.5 says why).
 */
public final class SketchCells {
  /** Words per cell: count, sum (3 words, low first), check, filter. */
  public static final int WORDS = 6;
  /** Words per cell of format version 1 (no filter). */
  public static final int WORDS_V1 = 5;
  /** Cells per digest. */
  public static final int HASHES = 3;

  private static final long GAMMA = 0x9E3779B97F4A7C15L;
  private static final long CHECK_SALT = 0xD1B54A32D192ED03L;

  public final int cells;
  public final long[] words;
  // r mod m without a division per update when m = 2^i or 3·2^i (i >= 1): ((r >>> i) mod 3)·2^i + (r mod 2^i).
  private final int shift;
  private final long low;
  private final int odd;

  public SketchCells(int cells) {
    this(cells, new long[WORDS * cells]);
  }

  public SketchCells(int cells, long[] words) {
    if (cells < 1) throw new IllegalArgumentException("a dsha sketch has at least 1 cell, not " + cells);
    if (words.length != WORDS * cells) throw new IllegalArgumentException("cell words do not match the cell count");
    this.cells = cells;
    this.words = words;
    this.shift = Integer.numberOfTrailingZeros(cells);
    this.low = (1L << shift) - 1;
    this.odd = validSize(cells) && shift >= 1 ? cells >>> shift : 0;
  }

  /** The cell of a random word: {@code r mod m}, r unsigned. */
  public int cellOf(long r) {
    if (odd == 1) return (int) (r & low);
    if (odd == 3) return (int) ((((r >>> shift) % 3) << shift) | (r & low)); // r >>> shift >= 0: % is the remainder
    return (int) Long.remainderUnsigned(r, cells);
  }

  /** Whether a sketch may have {@code m} cells: 2^i or 3·2^i, so that it folds into every smaller such size. */
  public static boolean validSize(long m) {
    if (m < 1) return false;
    final long odd = m / Long.lowestOneBit(m);
    return odd == 1 || odd == 3;
  }

  /** SplitMix64's output function (Steele, Lea and Flood 2014). */
  public static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** The digest's j-th random word (j = 0, 1, 2), whose remainder by the cell count is its j-th cell. */
  public static long word(long lo, long hi, int j) {
    return mix((lo ^ (hi * GAMMA)) + (j + 1) * GAMMA);
  }

  /** The digest's check word, which tells a cell holding one digest from a cell holding several. */
  public static long check(long lo, long hi) {
    return mix(hi ^ mix(lo ^ CHECK_SALT));
  }

  /**
   * Adds one occurrence of each of the first {@code n} digests {@code lo[i] + 2^64·hi[i]} with filter words {@code
   * filter[i]}: the cells of {@link #add(long, long, long, long)} with c = 1 for each (sums commute), but every cell index is computed before any cell is
   * updated. Updates that no longer wait on a digest being hashed are independent loads the processor overlaps, where
   * a row at a time each cache miss on a large sketch stalled the row that follows.
   */
  public void addAll(long[] lo, long[] hi, long[] filter, int n) {
    if (at == null || at.length < HASHES * n) {
      at = new int[HASHES * n];
      chk = new long[n];
    }
    final int[] at = this.at;
    final long[] chk = this.chk;
    for (int i = 0; i < n; i++) {
      chk[i] = check(lo[i], hi[i]);
      for (int j = 0; j < HASHES; j++) at[HASHES * i + j] = WORDS * cellOf(word(lo[i], hi[i], j));
    }
    final long[] w = words;
    for (int i = 0; i < n; i++) {
      for (int j = 0; j < HASHES; j++) {
        final int a = at[HASHES * i + j];
        w[a] += 1;
        addSum(a, lo[i], hi[i], 0);
        w[a + 4] += chk[i];
        w[a + 5] += filter[i];
      }
    }
  }

  // addAll's scratch: cell offsets and check words of a batch.
  private int[] at;
  private long[] chk;

  /**
   * Adds {@code c} occurrences (c may be negative) of the digest with its filter word; returns the cells it changed.
   */
  public int[] add(long lo, long hi, long filter, long c) {
    final long chk = check(lo, hi) * c;
    // c·x as a 192-bit two's complement number: |c|·x, negated when c < 0.
    final long a = c < 0 ? -c : c; // as unsigned: |c|, also for Long.MIN_VALUE
    final long h0 = mulHigh(a, lo);
    final long m1 = a * hi;
    final long[] p = {a * lo, m1 + h0, 0};
    p[2] = mulHigh(a, hi) + UInt128.carry(m1, h0, p[1]);
    if (c < 0) negate(p);
    final int[] changed = new int[HASHES];
    for (int j = 0; j < HASHES; j++) {
      final int cell = cellOf(word(lo, hi, j));
      final int at = WORDS * cell;
      words[at] += c;
      addSum(at, p[0], p[1], p[2]);
      words[at + 4] += chk;
      words[at + 5] += filter * c;
      changed[j] = cell;
    }
    return changed;
  }

  private void addSum(int at, long p0, long p1, long p2) {
    final long[] w = words;
    final long a0 = w[at + 1];
    final long a1 = w[at + 2];
    final long s0 = a0 + p0;
    final long t = a1 + p1;
    final long c0 = UInt128.carry(a0, p0, s0);
    final long s1 = t + c0;
    w[at + 1] = s0;
    w[at + 2] = s1;
    w[at + 3] += p2 + UInt128.carry(a1, p1, t) + UInt128.carry(t, c0, s1);
  }

  /** Negates a 192-bit two's complement number (three words, low first) in place. */
  static void negate(long[] p) {
    p[0] = ~p[0] + 1;
    p[1] = ~p[1] + (p[0] == 0 ? 1 : 0);
    p[2] = ~p[2] + (p[0] == 0 && p[1] == 0 ? 1 : 0);
  }

  /** The high 64 bits of the unsigned product a·b. */
  static long mulHigh(long a, long b) {
    final long aLo = a & 0xFFFFFFFFL;
    final long aHi = a >>> 32;
    final long bLo = b & 0xFFFFFFFFL;
    final long bHi = b >>> 32;
    final long ll = aLo * bLo;
    final long lh = aLo * bHi;
    final long hl = aHi * bLo;
    final long mid = (ll >>> 32) + (lh & 0xFFFFFFFFL) + (hl & 0xFFFFFFFFL);
    return aHi * bHi + (lh >>> 32) + (hl >>> 32) + (mid >>> 32);
  }

  /** Adds (sign 1) or subtracts (sign -1) {@code other}, cell by cell (the same number of cells). */
  public void combine(SketchCells other, int sign) {
    if (other.cells != cells) throw new IllegalArgumentException("sketches of different sizes combine after folding");
    final long[] w = words;
    final long[] o = other.words;
    for (int at = 0; at < words.length; at += WORDS) {
      w[at] += sign * o[at];
      w[at + 4] += sign * o[at + 4];
      w[at + 5] += sign * o[at + 5];
      final long[] p = {o[at + 1], o[at + 2], o[at + 3]};
      if (sign < 0) negate(p);
      addSum(at, p[0], p[1], p[2]);
    }
  }

  /** The sketch of {@code size} cells (which must divide this one's): cells whose indices agree mod size, added. */
  public SketchCells fold(int size) {
    if (size < 1 || cells % size != 0) {
      throw new IllegalArgumentException("a sketch of " + cells + " cells folds into a divisor, not " + size);
    }
    final SketchCells out = new SketchCells(size, java.util.Arrays.copyOf(words, WORDS * size));
    for (int from = size; from < cells; from += size) {
      final SketchCells part = new SketchCells(size, java.util.Arrays.copyOfRange(words, WORDS * from, WORDS * (from + size)));
      out.combine(part, 1);
    }
    return out;
  }

  /** Whether the cell holds no digest: count, sum and check zero (the filter word is not a digest's part). */
  public boolean isZero(int cell) {
    final int at = cell * WORDS;
    return words[at] == 0 && words[at + 1] == 0 && words[at + 2] == 0 && words[at + 3] == 0 && words[at + 4] == 0;
  }

  /** The cell's sum of filter words. */
  public long filter(int cell) {
    return words[cell * WORDS + 5];
  }

  /** The words of format version 1 (no filter word), cell by cell. */
  public long[] wordsV1() {
    final long[] out = new long[WORDS_V1 * cells];
    for (int i = 0; i < cells; i++) System.arraycopy(words, WORDS * i, out, WORDS_V1 * i, WORDS_V1);
    return out;
  }

  /** Cells of format version 1's words (filter words zero). */
  public static SketchCells fromV1(int cells, long[] v1) {
    final long[] w = new long[WORDS * cells];
    for (int i = 0; i < cells; i++) System.arraycopy(v1, WORDS_V1 * i, w, WORDS * i, WORDS_V1);
    return new SketchCells(cells, w);
  }
}
