package io.dsha.algorithm.secure;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;

import javax.crypto.Cipher;
import javax.crypto.spec.SecretKeySpec;

import org.apache.spark.unsafe.Platform;

/**
 * dsha-secure-v2's row value (SPEC.md §16.7): the row's seed SHA-256({@code schema digest || secure encoding}) is
 * split into halves a and b; block j of the 2048-byte stream is AES-128 under K_1 of (a xor j) xor AES-128 under K_2
 * of (b xor j), the two keys fixed per table (SHA-256 of "dsha-secure-v2" and the schema digest). Unlike
 * dsha-secure-v1 no key is set up per row: each half's 128 blocks are one ECB call on the JDK's AES intrinsics.
 */
public final class FixedKeyLtHashRowHasher extends BufferedRowHasher implements LaneRowHasher {
  public static final int LANES = 256;
  private static final int BLOCKS = 8 * LANES / 16;
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

  private final MessageDigest sha256;
  private final Cipher first;
  private final Cipher second;
  private final byte[] seed = new byte[32];
  private final byte[] input = new byte[16 * BLOCKS];
  private final byte[] outputA = new byte[16 * BLOCKS];
  private final byte[] outputB = new byte[16 * BLOCKS];
  private final LongBuffer outputAWords = words(outputA);
  private final LongBuffer outputBWords = words(outputB);
  private final long[] lanesB = new long[LANES];
  private final long[] lanes = new long[LANES];
  private boolean lanesRead;

  public FixedKeyLtHashRowHasher(byte[] schemaDigest) {
    super(schemaDigest);
    try {
      sha256 = MessageDigest.getInstance("SHA-256");
      sha256.update("dsha-secure-v2".getBytes(StandardCharsets.US_ASCII));
      byte[] keys = sha256.digest(schemaDigest);
      first = Cipher.getInstance("AES/ECB/NoPadding");
      second = Cipher.getInstance("AES/ECB/NoPadding");
      first.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(Arrays.copyOfRange(keys, 0, 16), "AES"));
      second.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(Arrays.copyOfRange(keys, 16, 32), "AES"));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("SHA-256 or AES is not available in this JVM: " + e);
    }
  }

  private static LongBuffer words(byte[] bytes) {
    return ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asLongBuffer();
  }

  @Override
  protected void digest(byte[] row, int length) {
    try {
      seedInto(sha256, row, length, seed);
      counterBlocks(0);
      first.doFinal(input, 0, input.length, outputA, 0);
      counterBlocks(2);
      second.doFinal(input, 0, input.length, outputB, 0);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-128 failed: " + e.getClass().getName());
    }
    lanesRead = false;
  }

  /**
   * Reads both outputs into words (a whole-array copy, then loops over long arrays, which the JIT vectorises): the
   * lanes are the exclusive or of {@code lanes} and {@code lanesB}.
   */
  private void readOutputs() {
    outputAWords.clear();
    outputAWords.get(lanes);
    outputBWords.clear();
    outputBWords.get(lanesB);
  }

  /**
   * {@code input} := blocks j = 0..127 of the seed's half at word {@code from} (0: a, 2: b) xor j, j as a 16-byte
   * big-endian integer: its last byte, the most significant byte of the block's second little-endian word.
   */
  private void counterBlocks(int from) {
    // The half's bytes copied as two native words (Platform: the Java 8 jars have no byte-array views as words).
    final long high = Platform.getLong(seed, Platform.BYTE_ARRAY_OFFSET + 8L * from);
    final long low = Platform.getLong(seed, Platform.BYTE_ARRAY_OFFSET + 8L * from + 8);
    final long counter = LITTLE_ENDIAN ? 56 : 0;
    for (int j = 0; j < BLOCKS; j++) {
      final long at = Platform.BYTE_ARRAY_OFFSET + 16L * j;
      Platform.putLong(input, at, high);
      Platform.putLong(input, at + 8, low ^ ((long) j << counter));
    }
  }

  @Override
  public int digestLength() {
    return 8 * LANES;
  }

  @Override
  public long digestWord(int i) {
    return lanes()[i];
  }

  @Override
  public long[] lanes() {
    if (!lanesRead) {
      readOutputs();
      for (int i = 0; i < LANES; i++) {
        lanes[i] ^= lanesB[i];
      }
      lanesRead = true;
    }
    return lanes;
  }

  // One pass over both outputs into the state (this is most of a row's additions' cost).
  @Override
  public void addLanesTo(long[] state, int at) {
    if (lanesRead) {
      for (int i = 0; i < LANES; i++) {
        state[at + i] += lanes[i];
      }
    } else {
      readOutputs();
      for (int i = 0; i < LANES; i++) {
        state[at + i] += lanes[i] ^ lanesB[i];
      }
    }
  }

  /** The row's seed (SPEC.md §16.7), 32 bytes. */
  public byte[] seed() {
    return seed.clone();
  }

  @Override
  public byte[] digestInto(byte[] target) {
    final long[] words = lanes();
    for (int i = 0; i < LANES; i++) {
      final long w = words[i];
      for (int k = 0; k < 8; k++) target[8 * i + k] = (byte) (w >>> (8 * k));
    }
    return target;
  }
}
