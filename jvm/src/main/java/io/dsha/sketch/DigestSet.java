package io.dsha.sketch;

import java.io.Serializable;
import java.util.Arrays;

/**
 * A set of 128-bit row digests, given as their 16-byte forms concatenated (each two little-endian words, low first,
 * as {@code logical_hash} returns them). Membership is asked with the words, so a row's digest is never materialised
 * as bytes: an open-addressing table of twice the digests' number, probed from the low word (digests are uniform).
 * Serialised as the bytes; the table is built once per task, on first use.
 */
public final class DigestSet implements Serializable {
  private static final long serialVersionUID = 1L;

  private final byte[] digests;
  private transient Table table; // built on first use; immutable, so safely shared by the threads of a task

  public DigestSet(byte[] digests) {
    if (digests.length % 16 != 0) {
      throw new IllegalArgumentException(
          "row digests must be 16 bytes each; " + digests.length + " bytes is not a whole number of them");
    }
    this.digests = digests;
  }

  public int size() {
    return digests.length / 16;
  }

  /** Whether the digest with these words (low, high) is in the set. */
  public boolean contains(long lo, long hi) {
    Table t = table;
    if (t == null) {
      t = new Table(digests);
      table = t;
    }
    return t.contains(lo, hi);
  }

  private static final class Table {
    private final long[] slots; // pairs {lo, hi}; a free slot is {0, 0}
    private final int mask;
    private final boolean hasZero; // the all-zero digest, which marks a free slot
    // A bitmap of at least 16 bits per digest, each digest setting the bit its high word picks. Most rows of a filtered
    // table are not in the set: a clear bit (about 15 times in 16) answers them from a few KiB that stay in L1, without
    // the probe's branch on a half-full table, which the CPU mispredicts.
    private final long[] bits;
    private final int bitMask;

    Table(byte[] digests) {
      int n = digests.length / 16;
      int size = Integer.highestOneBit(Math.max(4, 2 * n - 1)) << 1;
      long[] t = new long[2 * size];
      int m = size - 1;
      boolean zero = false;
      for (int d = 0; d < n; d++) {
        long lo = word(digests, 16 * d);
        long hi = word(digests, 16 * d + 8);
        if (lo == 0 && hi == 0) {
          zero = true;
          continue;
        }
        int s = (int) lo & m;
        while ((t[2 * s] != 0 || t[2 * s + 1] != 0) && !(t[2 * s] == lo && t[2 * s + 1] == hi)) {
          s = (s + 1) & m;
        }
        t[2 * s] = lo;
        t[2 * s + 1] = hi;
      }
      slots = t;
      mask = m;
      hasZero = zero;
      int nBits = Integer.highestOneBit(Math.max(64, 16 * n - 1)) << 1;
      bits = new long[nBits >>> 6];
      bitMask = nBits - 1;
      for (int d = 0; d < n; d++) {
        int b = (int) word(digests, 16 * d + 8) & bitMask;
        bits[b >>> 6] |= 1L << b;
      }
    }

    private static long word(byte[] b, int at) {
      long w = 0;
      for (int i = 7; i >= 0; i--) {
        w = (w << 8) | (b[at + i] & 0xffL);
      }
      return w;
    }

    boolean contains(long lo, long hi) {
      int bit = (int) hi & bitMask;
      if ((bits[bit >>> 6] & (1L << bit)) == 0) return false;
      if (lo == 0 && hi == 0) return hasZero;
      long[] t = slots;
      int s = (int) lo & mask;
      while (true) {
        long a = t[2 * s];
        long b = t[2 * s + 1];
        if (a == lo && b == hi) return true;
        if (a == 0 && b == 0) return false;
        s = (s + 1) & mask;
      }
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof DigestSet && Arrays.equals(digests, ((DigestSet) o).digests);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(digests);
  }

  /** Never the digests themselves: plans print this. */
  @Override
  public String toString() {
    return "<" + size() + (size() == 1 ? " digest>" : " digests>");
  }
}
