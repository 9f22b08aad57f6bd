package io.dsha.sketch;

import java.math.BigInteger;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Decodes the difference of two dsha sketches (SPEC.md §17.4) by peeling: a cell that holds one digest is recognised
 * by its sum dividing exactly by its count into a digest whose check word, times the count, is the cell's check; the
 * digest is then removed from each of its cells, which may leave other cells holding one digest. Decoding succeeds
 * when every cell is zero. {@link #decodeSmallest} folds the difference to the smallest size that decodes.
 */
public final class SketchDecoder {
  private SketchDecoder() {}

  private static final BigInteger TWO_128 = BigInteger.ONE.shiftLeft(128);

  /** What decoding found: on success the digests with their signed multiplicities, and the cells it used. */
  public static final class Result {
    public final boolean decoded;
    /** The size (cells) that decoded, or the size tried last when decoding failed. */
    public final int cells;
    /** Digests as {lo, hi} with their multiplicity (positive: in excess in the first sketch). */
    public final long[] lo;
    public final long[] hi;
    public final long[] count;
    /** Each digest's filter word (SPEC.md §17.2.1), meaningful only when {@link #filtersValid}. */
    public final long[] filter;
    /** Whether the filter words are those of the digests' rows (SPEC.md §17.4): decoded, each known, none left over. */
    public final boolean filtersValid;
    /** When decoding failed: an estimate of the number of distinct differing digests (0 when decoded). */
    public final long estimate;

    Result(boolean decoded, int cells, long[] lo, long[] hi, long[] count, long[] filter, boolean filtersValid,
        long estimate) {
      this.decoded = decoded;
      this.cells = cells;
      this.lo = lo;
      this.hi = hi;
      this.count = count;
      this.filter = filter;
      this.filtersValid = filtersValid;
      this.estimate = estimate;
    }

    public int size() {
      return lo.length;
    }
  }

  /** The sizes a sketch of {@code m} cells folds into, smallest first: 1, 2, 3, 4, 6, 8, 12, ... up to m. */
  public static int[] foldSizes(int m) {
    final java.util.TreeSet<Integer> sizes = new java.util.TreeSet<>();
    for (long s = 1; s <= m; s *= 2) {
      if (m % s == 0) sizes.add((int) s);
      if (3 * s <= m && m % (3 * s) == 0) sizes.add((int) (3 * s));
    }
    final int[] out = new int[sizes.size()];
    int k = 0;
    for (int s : sizes) out[k++] = s;
    return out;
  }

  /** Decodes at the smallest fold of {@code diff} that decodes; on failure, with an estimate of the differences. */
  public static Result decodeSmallest(SketchCells diff) {
    Result last = null;
    // Each peel empties a cell, so a fold with fewer cells than distinct digests cannot decode: skip the folds well
    // below the estimate (accurate to a few percent when it is large), which would only fail, slowly.
    final long estimate = estimate(diff);
    for (int s : foldSizes(diff.cells)) {
      if (estimate >= 64 && s < 0.8 * estimate && s != diff.cells) continue;
      last = decode(s == diff.cells ? diff : diff.fold(s));
      if (last.decoded) return last;
    }
    return new Result(false, diff.cells, last.lo, last.hi, last.count, last.filter, false, estimate);
  }

  /** Peels {@code diff} (a copy: the argument is left unchanged). */
  public static Result decode(SketchCells diff) {
    final int m = diff.cells;
    final SketchCells w = new SketchCells(m, diff.words.clone());
    final Map<Digest, Long> found = new LinkedHashMap<>();
    final Map<Digest, Long> filters = new java.util.HashMap<>();
    boolean filtersKnown = true;
    int[] stack = new int[Math.max(16, m)];
    int top = 0;
    for (int i = m - 1; i >= 0; i--) stack[top++] = i;
    final long[] pure = new long[4];
    long peels = 0;
    final long limit = 4L * m + 64; // a true decode peels each digest once; more means a false pure cell
    while (top > 0) {
      final int i = stack[--top];
      if (!pure(w, i, pure)) continue;
      if (++peels > limit) break;
      final Digest x = new Digest(pure[0], pure[1]);
      found.merge(x, pure[2], Long::sum);
      final long filter = pure[3];
      if (filter < 0 || filters.getOrDefault(x, filter) != filter) filtersKnown = false;
      else filters.put(x, filter);
      final int[] changed = w.add(pure[0], pure[1], filter < 0 ? 0 : filter, -pure[2]);
      if (top + changed.length > stack.length) stack = java.util.Arrays.copyOf(stack, 2 * stack.length);
      for (int j : changed) stack[top++] = j;
    }
    boolean zero = true;
    for (int i = 0; i < m && zero; i++) zero = w.isZero(i);
    boolean filtersZero = true;
    for (int i = 0; i < m && filtersZero; i++) filtersZero = w.filter(i) == 0;
    found.values().removeIf(v -> v == 0L);
    final int n = found.size();
    final long[] lo = new long[n];
    final long[] hi = new long[n];
    final long[] count = new long[n];
    final long[] filter = new long[n];
    int k = 0;
    for (Map.Entry<Digest, Long> e : found.entrySet()) {
      lo[k] = e.getKey().lo;
      hi[k] = e.getKey().hi;
      filter[k] = filters.getOrDefault(e.getKey(), -1L);
      count[k++] = e.getValue();
    }
    return new Result(zero, m, lo, hi, count, filter, zero && filtersKnown && filtersZero, 0L);
  }

  /**
   * If cell {@code i} holds one digest x only, writes {lo, hi, c, φ} into {@code out} and returns true, c being x's
   * multiplicity. The cell then has count C = μ·c, where μ (1 to 3) is how many of x's cells are this one: its sum
   * divides exactly by C into x in [0, 2^128), its check is C·check(x), and μ divides C. φ, x's filter word, is the
   * cell's filter divided by C when |C| < 2^31, exact and in [0, 2^32), else -1 (unknown).
   */
  static boolean pure(SketchCells w, int i, long[] out) {
    final long[] words = w.words;
    final int at = i * SketchCells.WORDS;
    final long total = words[at];
    if (total == 0) return false;
    long lo;
    long hi;
    if (total == 1 || total == -1) {
      final long[] s = {words[at + 1], words[at + 2], words[at + 3]};
      if (total == -1) SketchCells.negate(s);
      if (s[2] != 0) return false;
      lo = s[0];
      hi = s[1];
    } else {
      final BigInteger sum = signed192(words[at + 1], words[at + 2], words[at + 3]);
      final BigInteger[] qr = sum.divideAndRemainder(BigInteger.valueOf(total));
      if (qr[1].signum() != 0 || qr[0].signum() < 0 || qr[0].compareTo(TWO_128) >= 0) return false;
      lo = qr[0].longValue();
      hi = qr[0].shiftRight(64).longValue();
    }
    if (SketchCells.check(lo, hi) * total != words[at + 4]) return false;
    int mu = 0;
    for (int j = 0; j < SketchCells.HASHES; j++) {
      if (w.cellOf(SketchCells.word(lo, hi, j)) == i) mu++;
    }
    if (mu == 0 || total % mu != 0) return false;
    out[0] = lo;
    out[1] = hi;
    out[2] = total / mu;
    final long f = w.filter(i);
    final boolean exact = Math.abs(total) < (1L << 31) && f % total == 0; // |C·φ| < 2^63: no wrap-around
    out[3] = exact && f / total >= 0 && f / total < (1L << 32) ? f / total : -1L;
    return true;
  }

  private static BigInteger signed192(long w0, long w1, long w2) {
    final byte[] b = new byte[24];
    for (int k = 0; k < 8; k++) {
      b[k] = (byte) (w2 >>> (56 - 8 * k));
      b[8 + k] = (byte) (w1 >>> (56 - 8 * k));
      b[16 + k] = (byte) (w0 >>> (56 - 8 * k));
    }
    return new BigInteger(b); // big-endian two's complement
  }

  /**
   * An estimate of the number of distinct digests in {@code diff}, from its share of zero cells (each digest takes
   * three cells, so a cell stays zero with probability about exp(-3d/m)); a lower bound when no cell is zero.
   */
  public static long estimate(SketchCells diff) {
    final int m = diff.cells;
    int zeros = 0;
    for (int i = 0; i < m; i++) if (diff.isZero(i)) zeros++;
    final double z = Math.max(zeros, 0.5);
    return (long) Math.ceil(-m / (double) SketchCells.HASHES * Math.log(z / m));
  }

  private static final class Digest {
    final long lo;
    final long hi;

    Digest(long lo, long hi) {
      this.lo = lo;
      this.hi = hi;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Digest && ((Digest) o).lo == lo && ((Digest) o).hi == hi;
    }

    @Override
    public int hashCode() {
      return Long.hashCode(lo * 31 + hi);
    }
  }
}
