package io.dsha.algorithm.secure;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;

/**
 * dsha-secure-v1's row value (SPEC.md §16.3): the seed SHA-256({@code schema digest || secure encoding}) keys AES-256,
 * whose counter-mode keystream (blocks 0..255) gives 512 little-endian 64-bit lanes. The keystream is computed as
 * AES-256-ECB over the fixed counter blocks, which is the same bytes as CTR and runs on the JDK's AES intrinsics.
 * The digest words are the lanes; the 32-byte seed is {@link #seed()}.
 */
public final class LtHashRowHasher extends BufferedRowHasher implements LaneRowHasher {
  public static final int LANES = 512;
  private static final byte[] COUNTERS = counters();

  private final MessageDigest sha256;
  private final Cipher aes;
  private final byte[] seed = new byte[32];
  private final byte[] stream = new byte[8 * LANES];
  private final long[] lanes = new long[LANES];
  private final LongBuffer streamWords = ByteBuffer.wrap(stream).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer();

  public LtHashRowHasher(byte[] schemaDigest) {
    super(schemaDigest);
    try {
      sha256 = MessageDigest.getInstance("SHA-256");
      aes = Cipher.getInstance("AES/ECB/NoPadding");
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 or AES is not available in this JVM: " + e);
    }
  }

  private static byte[] counters() {
    byte[] c = new byte[16 * (8 * LANES / 16)];
    for (int j = 0; j < c.length / 16; j++) {
      // Block j is j as a 16-byte big-endian integer.
      c[16 * j + 14] = (byte) (j >>> 8);
      c[16 * j + 15] = (byte) j;
    }
    return c;
  }

  @Override
  protected void digest(byte[] row, int length) {
    try {
      seedInto(sha256, row, length, seed);
      aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(seed, "AES"));
      aes.doFinal(COUNTERS, 0, COUNTERS.length, stream, 0);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-256 failed: " + e.getClass().getName());
    }
    streamWords.clear();
    streamWords.get(lanes);
  }

  @Override
  public int digestLength() {
    return 8 * LANES;
  }

  @Override
  public long digestWord(int i) {
    return lanes[i];
  }

  @Override
  public long[] lanes() {
    return lanes;
  }

  @Override
  public void addLanesTo(long[] state, int at) {
    for (int i = 0; i < LANES; i++) {
      state[at + i] += lanes[i];
    }
  }

  /** The row's seed (SPEC.md §16.3), 32 bytes. */
  public byte[] seed() {
    return seed.clone();
  }

  @Override
  public byte[] digestInto(byte[] target) {
    System.arraycopy(stream, 0, target, 0, stream.length);
    return target;
  }
}
