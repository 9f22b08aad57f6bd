package io.dsha.algorithm.v1;

import io.dsha.algorithm.RowHasher;
import io.dsha.hash.Murmur3x64Stream;

/**
 * dsha-v1's row hash (SPEC.md §4): MurmurHash3_x64_128 with seed 0 of the schema digest followed by the row's
 * encoding. The state after the schema digest (a whole number of blocks) is computed once; every row resumes it.
 */
public final class Murmur3RowHasher extends Murmur3x64Stream implements RowHasher {
  private final long startH1;
  private final long startH2;
  private final long startLength;

  public Murmur3RowHasher(byte[] schemaDigest) {
    reset();
    putBytes(schemaDigest);
    startH1 = stateH1();
    startH2 = stateH2();
    startLength = length();
  }

  @Override
  public void startRow() {
    reset(startH1, startH2, startLength);
  }

  @Override
  public void finishRow() {
    finish();
  }

  @Override
  public int digestLength() {
    return 16;
  }

  @Override
  public long digestWord(int i) {
    return i == 0 ? digestLow() : digestHigh();
  }
}
