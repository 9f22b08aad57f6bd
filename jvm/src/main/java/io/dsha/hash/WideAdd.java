package io.dsha.hash;

/** Multi-word unsigned addition: the carry out of one 64-bit word of a wider sum. */
public final class WideAdd {
  private WideAdd() {}

  /** The carry (0 or 1) out of {@code a + b + carryIn} as unsigned 64-bit words. */
  public static long carry(long a, long b, long carryIn) {
    long s = a + b;
    return UInt128.carry(a, b, s) | UInt128.carry(s, carryIn, s + carryIn);
  }
}
