package io.dsha.algorithm.secure;

import io.dsha.algorithm.RowHasher;

/** A row hasher whose digest is lanes of 64 bits, summed lane by lane (LtHash, SPEC.md §16.3, §16.7). */
public interface LaneRowHasher extends RowHasher {
  /** The finished row's lanes; the array is reused for the next row. */
  long[] lanes();

  /** Adds the finished row's lanes to {@code state[at, at + lanes)}, lane by lane mod 2^64. */
  void addLanesTo(long[] state, int at);
}
