package io.dsha.sketch;

import java.io.Serializable;
import java.util.Arrays;

/**
 * A set of row filter words (SPEC.md §17.2.1), given as 4-byte little-endian words concatenated: which rows may be
 * among those a decoded difference names, asked before their digest is computed. A bitmap of at least 16 bits per
 * word answers most rows from L1 (filter words are uniform), then an open-addressing table decides. Serialised as the
 * bytes; the table is built once per task, on first use.
 */
public final class FilterWordSet implements Serializable {
  private static final long serialVersionUID = 1L;

  private final byte[] words;
  private transient Table table;

  public FilterWordSet(byte[] words) {
    if (words.length % 4 != 0) {
      throw new IllegalArgumentException(
          "filter words are 4 bytes each; " + words.length + " bytes is not a whole number of them");
    }
    this.words = words;
  }

  public int size() {
    return words.length / 4;
  }

  /** Whether the filter word {@code w} (0 to 2^32 - 1) is in the set. */
  public boolean contains(long w) {
    Table t = table;
    if (t == null) {
      t = new Table(words);
      table = t;
    }
    return t.contains(w);
  }

  private static final class Table {
    private final long[] slots; // word + 1; 0 marks a free slot
    private final int mask;
    private final long[] bits;
    private final int bitMask;

    Table(byte[] words) {
      final int n = words.length / 4;
      final int size = Integer.highestOneBit(Math.max(4, 2 * n - 1)) << 1;
      slots = new long[size];
      mask = size - 1;
      final int nBits = Integer.highestOneBit(Math.max(64, 16 * n - 1)) << 1;
      bits = new long[nBits >>> 6];
      bitMask = nBits - 1;
      for (int k = 0; k < n; k++) {
        final long w = (words[4 * k] & 0xffL) | (words[4 * k + 1] & 0xffL) << 8 | (words[4 * k + 2] & 0xffL) << 16
            | (words[4 * k + 3] & 0xffL) << 24;
        int s = slot(w);
        while (slots[s] != 0 && slots[s] != w + 1) s = (s + 1) & mask;
        slots[s] = w + 1;
        final int b = bit(w);
        bits[b >>> 6] |= 1L << b;
      }
    }

    private int slot(long w) {
      return (int) (w * 0x9E3779B97F4A7C15L >>> 40) & mask;
    }

    private int bit(long w) {
      return (int) (w * 0xC2B2AE3D27D4EB4FL >>> 8) & bitMask;
    }

    boolean contains(long w) {
      final int b = bit(w);
      if ((bits[b >>> 6] & (1L << b)) == 0) return false;
      int s = slot(w);
      while (true) {
        final long v = slots[s];
        if (v == w + 1) return true;
        if (v == 0) return false;
        s = (s + 1) & mask;
      }
    }
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof FilterWordSet && Arrays.equals(words, ((FilterWordSet) o).words);
  }

  @Override
  public int hashCode() {
    return Arrays.hashCode(words);
  }

  /** Never the words themselves: plans print this. */
  @Override
  public String toString() {
    return "<" + size() + (size() == 1 ? " filter word>" : " filter words>");
  }
}
