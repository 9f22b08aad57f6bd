package io.dsha.algorithm.secure;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * dsha-keyed-v1's row value (SPEC.md §16.2): HMAC-SHA-256 under the key of {@code schema digest || secure encoding},
 * 32 bytes, read as four little-endian words.
 *
 * <p>HMAC (RFC 2104) is computed here from SHA-256 states taken once per task: the inner hash after the key's inner
 * pad and the schema digest, the outer hash after the key's outer pad. Each row then clones them, so the two pad
 * blocks are not hashed again for every row as {@code javax.crypto.Mac} does (measured: a fifth less time per row of
 * lineitem). The same bytes as {@code Mac("HmacSHA256")}; SHA-256 runs on the JDK's intrinsic (SHA extensions).
 */
public final class HmacRowHasher extends KeyedRowHasher {
  private static final int BLOCK = 64;

  private final MessageDigest innerStart;
  private final MessageDigest outerStart;
  private final byte[] inner = new byte[32];

  public HmacRowHasher(byte[] schemaDigest, byte[] key) {
    super(schemaDigest);
    try {
      byte[] k = key.length > BLOCK ? MessageDigest.getInstance("SHA-256").digest(key) : key;
      byte[] ipad = new byte[BLOCK];
      byte[] opad = new byte[BLOCK];
      for (int i = 0; i < BLOCK; i++) {
        byte b = i < k.length ? k[i] : 0;
        ipad[i] = (byte) (b ^ 0x36);
        opad[i] = (byte) (b ^ 0x5c);
      }
      innerStart = MessageDigest.getInstance("SHA-256");
      innerStart.update(ipad);
      innerStart.update(schemaDigest);
      outerStart = MessageDigest.getInstance("SHA-256");
      outerStart.update(opad);
      java.util.Arrays.fill(ipad, (byte) 0);
      java.util.Arrays.fill(opad, (byte) 0);
      innerStart.clone(); // fail here, not on the first row, if this provider's SHA-256 cannot be cloned
    } catch (NoSuchAlgorithmException | CloneNotSupportedException e) {
      // Never the key in a message: only what failed.
      throw new IllegalStateException("SHA-256 (cloneable) is not available in this JVM: " + e.getClass().getName());
    }
  }

  @Override
  protected void digest(byte[] row, int length) {
    // The schema digest is already in innerStart.
    try {
      MessageDigest h = (MessageDigest) innerStart.clone();
      h.update(row, 0, length);
      h.digest(inner, 0, 32);
      h = (MessageDigest) outerStart.clone();
      h.update(inner, 0, 32);
      h.digest(value, 0, 32);
    } catch (CloneNotSupportedException | java.security.DigestException e) {
      throw new IllegalStateException("SHA-256: " + e.getClass().getName());
    }
    valueWritten();
  }
}
