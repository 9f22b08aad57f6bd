package io.dsha.algorithm.secure;

import java.nio.ByteOrder;
import java.security.DigestException;
import java.security.MessageDigest;

import org.apache.spark.unsafe.Platform;

import io.dsha.algorithm.RowHasher;
import io.dsha.hash.ByteBufferSink;

/**
 * A row hasher over a cryptographic primitive that takes the row's secure encoding (SPEC.md §16.1) whole: the
 * encoders write the row into this buffer; {@link #finishRow()} hands it to {@link #digest(byte[], int)}, which hashes
 * {@code schema digest || row} (the schema digest from {@link #schemaDigest()}, or taken into a state beforehand).
 * Row digests are read back as little-endian words.
 */
public abstract class BufferedRowHasher extends ByteBufferSink implements RowHasher {
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
  private final byte[] schemaDigest;

  protected BufferedRowHasher(byte[] schemaDigest) {
    this.schemaDigest = schemaDigest.clone();
  }

  @Override
  public final void startRow() {
    clear();
  }

  @Override
  public final void finishRow() {
    digest(array(), length());
  }

  /** The table's schema digest, which every row's hash starts with (SPEC.md §16). */
  protected final byte[] schemaDigest() {
    return schemaDigest;
  }

  /**
   * The row's seed of the public algorithms (SPEC.md §16.3, §16.7): SHA-256({@code schemaDigest() || row[0,
   * length)}) into {@code seed[0, 32)}.
   */
  protected final void seedInto(MessageDigest sha256, byte[] row, int length, byte[] seed) throws DigestException {
    sha256.update(schemaDigest);
    sha256.update(row, 0, length);
    sha256.digest(seed, 0, 32);
  }

  /** Computes the digest of {@code schemaDigest() || row[0, length)}. */
  protected abstract void digest(byte[] row, int length);

  /** The little-endian word at {@code b[at, at + 8)}, which the caller knows is inside {@code b}. */
  static long wordLE(byte[] b, int at) {
    final long v = Platform.getLong(b, Platform.BYTE_ARRAY_OFFSET + at);
    return LITTLE_ENDIAN ? v : Long.reverseBytes(v);
  }
}
