package io.dsha.hash;

/**
 * Unsigned 128-bit integers kept as two longs (low, high): the one place the add-with-carry of dsha's modular sums is
 * written. Called by interpreted and generated code alike (the JIT inlines it).
 */
public final class UInt128 {
  private UInt128() {}

  /** High word of (highA:lowA) + (highB:lowB) mod 2^128: highA + highB + the carry out of lowA + lowB. */
  public static long addHigh(long highA, long highB, long lowA, long lowB) {
    return highA + highB + carry(lowA, lowB, lowA + lowB);
  }

  /**
   * The carry (0 or 1) out of the unsigned addition {@code a + b = sum}, without a branch: the top bit of
   * {@code (a & b) | ((a | b) & ~sum)}. The operands of dsha's sums are random, so a comparison that the JIT compiles
   * to a branch mispredicts half the time (measured: a sketch update took twice as long).
   */
  public static long carry(long a, long b, long sum) {
    return ((a & b) | ((a | b) & ~sum)) >>> 63;
  }

  /** The 32 lower-case hex digits of (high:low), most significant first. */
  public static String hex(long high, long low) {
    return String.format("%016x%016x", high, low);
  }
}
