package io.dsha.algorithm.secure;

/**
 * A keyed algorithm's row hasher (SPEC.md §16.2, §16.6): its row value is 32 bytes, which {@link #digest(byte[], int)}
 * writes into {@link #value} and then reads as four little-endian words with {@link #valueWritten()}.
 */
public abstract class KeyedRowHasher extends BufferedRowHasher {
  /** The row value's bytes, written by {@code digest}. */
  protected final byte[] value = new byte[32];
  private final long[] words = new long[4];

  protected KeyedRowHasher(byte[] schemaDigest) {
    super(schemaDigest);
  }

  /** Reads the row value's words after {@code digest} wrote {@link #value}. */
  protected final void valueWritten() {
    for (int i = 0; i < 4; i++) words[i] = wordLE(value, 8 * i);
  }

  @Override
  public final int digestLength() {
    return 32;
  }

  @Override
  public final long digestWord(int i) {
    return words[i];
  }

  @Override
  public final byte[] digestInto(byte[] target) {
    System.arraycopy(value, 0, target, 0, 32);
    return target;
  }
}
