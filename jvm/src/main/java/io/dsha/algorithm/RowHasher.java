package io.dsha.algorithm;

import io.dsha.hash.ByteSink;

/**
 * An algorithm's row hash: a sink that the encoders write one row into, between {@link #startRow()} and
 * {@link #finishRow()}, giving the row digest. Each row starts from the state after the schema digest, so the digest
 * is bound to the canonical schema. One instance is reused for every row of a task.
 */
public interface RowHasher extends ByteSink {
  /** Starts a row: the state after absorbing the schema digest. */
  void startRow();

  /** Ends the row; the digest is then readable. */
  void finishRow();

  /** Length of the row digest in bytes. */
  int digestLength();

  /** Word {@code i} (0 = least significant) of the finished row digest read as a little-endian number. */
  long digestWord(int i);

  /** Writes the finished row digest into {@code target} (at least {@link #digestLength()} bytes) and returns it. */
  byte[] digestInto(byte[] target);
}
