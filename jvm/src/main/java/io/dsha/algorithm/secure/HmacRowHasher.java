package io.dsha.algorithm.secure;

import java.security.GeneralSecurityException;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * dsha-keyed-v1's row value (SPEC.md §16.2): HMAC-SHA-256 under the key of {@code schema digest || secure encoding},
 * 32 bytes, read as four little-endian words. The JDK's HMAC runs on its SHA-256 intrinsic (SHA extensions).
 */
public final class HmacRowHasher extends BufferedRowHasher {
  private final Mac mac;
  private final byte[] out = new byte[32];
  private final long[] words = new long[4];

  public HmacRowHasher(byte[] schemaDigest, byte[] key) {
    super(schemaDigest);
    try {
      mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
    } catch (GeneralSecurityException e) {
      // Never the key in a message: only what failed.
      throw new IllegalStateException("HMAC-SHA-256 is not available in this JVM: " + e.getClass().getName());
    }
  }

  @Override
  protected void digest(byte[] prefix, byte[] row, int length) {
    mac.update(prefix);
    mac.update(row, 0, length);
    try {
      mac.doFinal(out, 0);
    } catch (javax.crypto.ShortBufferException e) {
      throw new IllegalStateException(e.getMessage());
    }
    for (int i = 0; i < 4; i++) words[i] = wordLE(out, 8 * i);
  }

  @Override
  public int digestLength() {
    return 32;
  }

  @Override
  public long digestWord(int i) {
    return words[i];
  }

  @Override
  public byte[] digestInto(byte[] target) {
    System.arraycopy(out, 0, target, 0, 32);
    return target;
  }
}
