package io.dsha.hash;

/**
 * Unsigned 128-bit integers kept as two longs (low, high): the one place the add-with-carry of dsha's modular sums is
 * written. Called by interpreted and generated code alike (the JIT inlines it).
 */
public final class UInt128 {
  private UInt128() {}

  /** High word of (highA:lowA) + (highB:lowB) mod 2^128: highA + highB + the carry out of lowA + lowB. */
  public static long addHigh(long highA, long highB, long lowA, long lowB) {
    return highA + highB + (Long.compareUnsigned(lowA + lowB, lowA) < 0 ? 1L : 0L);
  }

  /** The 32 lower-case hex digits of (high:low), most significant first. */
  public static String hex(long high, long low) {
    return String.format("%016x%016x", high, low);
  }
}
