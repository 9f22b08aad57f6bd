package io.dsha.algorithm.secure;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.math.BigInteger;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;

import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.apache.spark.unsafe.Platform;

import io.dsha.hash.UInt128;

/**
 * dsha-keyed-v2's row value (SPEC.md §16.6): NH with 64-bit words iterated twice (UMAC), a five-coefficient
 * polynomial modulo 2^127 - 1 (VMAC's second layer), then two AES-256 blocks of the result. All subkeys come once per
 * task from HMAC-SHA-256 of the key and the schema digest, so a row costs two multiplications per 16 bytes and one
 * call of the JDK's AES intrinsic instead of HMAC's four SHA-256 compressions.
 */
public final class NhPolyAesRowHasher extends KeyedRowHasher {
  private static final byte[] DOMAIN = "dsha-keyed-v2".getBytes(StandardCharsets.US_ASCII);
  private static final BigInteger P = BigInteger.ONE.shiftLeft(127).subtract(BigInteger.ONE);
  private static final long LOW127 = Long.MAX_VALUE; // the high word's mask of a 127-bit number
  /** Math.multiplyHigh (Java 9+) when the JVM has it: its intrinsic; the 3.5 jars are compiled for Java 8. */
  private static final MethodHandle MULTIPLY_HIGH = multiplyHigh();
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
  private static final long BASE = Platform.BYTE_ARRAY_OFFSET;

  private final byte[] seed;
  private final Cipher aes;
  /** r^5, r^4, r^3, r^2, r (index i: the coefficient a_i's power), each as two words, low first. */
  private final long[] powers = new long[10];
  private long[] nh = new long[0];
  private final byte[] blocks = new byte[32];
  /** The polynomial's running sum, three words, low first (addTerm). */
  private long acc0, acc1, acc2;

  public NhPolyAesRowHasher(byte[] schemaDigest, byte[] key) {
    super(schemaDigest);
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      mac.update(DOMAIN);
      seed = mac.doFinal(schemaDigest);
      byte[] head = keystream(seed, 0, 3); // r (16 bytes) and E (32 bytes)
      BigInteger r = new BigInteger(1, reversed(head, 0, 16)).mod(BigInteger.ONE.shiftLeft(127)).mod(P);
      BigInteger power = BigInteger.ONE;
      for (int k = 1; k <= 5; k++) {
        power = power.multiply(r).mod(P);
        powers[2 * (5 - k)] = power.longValue();
        powers[2 * (5 - k) + 1] = power.shiftRight(64).longValue();
      }
      aes = Cipher.getInstance("AES/ECB/NoPadding");
      aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(java.util.Arrays.copyOfRange(head, 16, 48), "AES"));
      java.util.Arrays.fill(head, (byte) 0);
    } catch (GeneralSecurityException e) {
      // Never the key in a message: only what failed.
      throw new IllegalStateException("HMAC-SHA-256 or AES-256 is not available in this JVM: " + e.getClass().getName());
    }
    ensureKeyWords(64);
  }

  /** Blocks {@code [from, from + count)} of the AES-256-CTR keystream under {@code key} (16-byte big-endian counters). */
  private static byte[] keystream(byte[] key, long from, int count) throws GeneralSecurityException {
    byte[] counters = new byte[16 * count];
    for (int j = 0; j < count; j++) {
      long c = from + j;
      for (int b = 0; b < 8; b++) counters[16 * j + 15 - b] = (byte) (c >>> (8 * b));
    }
    Cipher ctr = Cipher.getInstance("AES/ECB/NoPadding");
    ctr.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(key, "AES"));
    return ctr.doFinal(counters);
  }

  /** NH key words k_0 .. k_(n-1) at least: keystream bytes from 48 on (block 3 on), grown by doubling. */
  private void ensureKeyWords(int n) {
    if (nh.length >= n) return;
    int words = Math.max(n, 2 * nh.length);
    words += words & 1; // whole blocks: two words each
    try {
      byte[] stream = keystream(seed, 3, words / 2);
      long[] k = new long[words];
      for (int i = 0; i < words; i++) k[i] = wordLE(stream, 8 * i);
      nh = k;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-256 failed: " + e.getClass().getName());
    }
  }

  @Override
  protected void digest(byte[] row, int length) {
    final int n = (length + 15) >>> 4;
    ensureKeyWords(2 * n + 2);
    final long[] k = nh;
    long lo0 = 0, hi0 = 0, lo1 = 0, hi1 = 0;
    final int full = length >>> 4;
    for (int i = 0; i < n; i++) {
      final long w0, w1;
      if (i < full) {
        w0 = le(row, 16 * i);
        w1 = le(row, 16 * i + 8);
      } else { // the last, partial block, zero-padded (bytes past `length` in the buffer are stale)
        w0 = partialLE(row, 16 * i, length);
        w1 = partialLE(row, 16 * i + 8, length);
      }
      final long a = w0 + k[2 * i], b = w1 + k[2 * i + 1];
      final long p = a * b, ph = multiplyHighUnsigned(a, b);
      final long s = lo0 + p;
      hi0 += ph + UInt128.carry(lo0, p, s);
      lo0 = s;
      final long c = w0 + k[2 * i + 2], d = w1 + k[2 * i + 3];
      final long q = c * d, qh = multiplyHighUnsigned(c, d);
      final long t = lo1 + q;
      hi1 += qh + UInt128.carry(lo1, q, t);
      lo1 = t;
    }
    polynomial(lo0, hi0, lo1, hi1, length);
    try {
      aes.update(blocks, 0, 32, value, 0);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-256 failed: " + e.getClass().getName());
    }
    valueWritten();
  }

  /**
   * The polynomial's value u = a0·r^5 + a1·r^4 + a2·r^3 + a3·r^2 + a4·r mod p from precomputed powers (five independent
   * products, not Horner's chain), written into `blocks` as u and u + 2^127, 16 bytes each, little-endian.
   */
  private void polynomial(long a0, long a1, long a2, long a3, long a4) {
    final long[] pw = powers;
    // Five calls with constant indices rather than a loop that picked its coefficient by a chain of selects: the
    // profile showed the loop at two thirds of the NH loop's time for half as many multiplications.
    acc0 = 0;
    acc1 = 0;
    acc2 = 0;
    addTerm(a0, pw[0], pw[1]);
    addTerm(a1, pw[2], pw[3]);
    addTerm(a2, pw[4], pw[5]);
    addTerm(a3, pw[6], pw[7]);
    addTerm(a4, pw[8], pw[9]);
    // acc < 5·(2^127 + 2^64) < 2^130: fold the bits from 127 on, then subtract p once if u ≥ p.
    long u0 = acc0;
    long u1 = acc1 & LOW127;
    final long over = (acc1 >>> 63) | (acc2 << 1);
    final long s = u0 + over;
    u1 += UInt128.carry(u0, over, s);
    u0 = s;
    if (u1 < 0) { // u ≥ 2^127 (and < 2^127 + 8): u - p = u - 2^127 + 1
      u1 &= LOW127;
      u0 += 1; // u0 ≤ 8 here: no carry
    } else if (u1 == LOW127 && u0 == -1L) { // u = p
      u0 = 0;
      u1 = 0;
    }
    putLE(blocks, 0, u0);
    putLE(blocks, 8, u1);
    putLE(blocks, 16, u0);
    putLE(blocks, 24, u1 | Long.MIN_VALUE);
  }

  /** acc += a·r reduced below 2^127 + 2^64 (r = r1·2^64 + r0 < p, r1 < 2^63); acc is (acc0, acc1, acc2), low first. */
  private void addTerm(long a, long r0, long r1) {
    // a·r = p0 + 2^64·w1 + 2^128·w2 (< 2^191), reduced with 2^127 ≡ 1 (mod p)
    final long p0 = a * r0, p0h = multiplyHighUnsigned(a, r0);
    final long p1 = a * r1, p1h = multiplyHighUnsigned(a, r1); // a·r1 < 2^127: p1h < 2^63
    final long w1 = p0h + p1;
    final long w2 = p1h + UInt128.carry(p0h, p1, w1);
    final long high = (w1 >>> 63) | (w2 << 1); // bits 127 and up, < 2^64
    final long lo = p0 + high;
    final long mid = (w1 & LOW127) + UInt128.carry(p0, high, lo);
    final long s0 = acc0 + lo;
    final long c0 = UInt128.carry(acc0, lo, s0);
    final long s1 = acc1 + mid;
    final long c1 = UInt128.carry(acc1, mid, s1);
    final long s1c = s1 + c0;
    acc2 += c1 + UInt128.carry(s1, c0, s1c);
    acc0 = s0;
    acc1 = s1c;
  }

  private static long multiplyHighUnsigned(long a, long b) {
    return multiplyHighSigned(a, b) + ((a >> 63) & b) + ((b >> 63) & a);
  }

  private static long multiplyHighSigned(long a, long b) {
    if (MULTIPLY_HIGH != null) {
      try {
        return (long) MULTIPLY_HIGH.invokeExact(a, b);
      } catch (Throwable t) {
        throw new IllegalStateException(t);
      }
    }
    // Java 8: the signed high word from 32-bit halves.
    final long aHi = a >> 32, aLo = a & 0xFFFFFFFFL, bHi = b >> 32, bLo = b & 0xFFFFFFFFL;
    final long t = aHi * bLo + ((aLo * bLo) >>> 32);
    final long u = aLo * bHi + (t & 0xFFFFFFFFL);
    return aHi * bHi + (t >> 32) + (u >> 32);
  }

  private static MethodHandle multiplyHigh() {
    try {
      return MethodHandles.publicLookup().findStatic(Math.class, "multiplyHigh",
          MethodType.methodType(long.class, long.class, long.class));
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }

  private static long le(byte[] b, int at) {
    final long v = Platform.getLong(b, BASE + at);
    return LITTLE_ENDIAN ? v : Long.reverseBytes(v);
  }

  /** The word at `at`, with the bytes from `end` on taken as zeros. */
  private static long partialLE(byte[] b, int at, int end) {
    final int n = end - at;
    if (n <= 0) return 0;
    if (n >= 8) return le(b, at);
    if (at + 8 <= b.length) return le(b, at) & ((1L << (8 * n)) - 1);
    long v = 0;
    for (int k = n - 1; k >= 0; k--) v = (v << 8) | (b[at + k] & 0xffL);
    return v;
  }

  private static void putLE(byte[] b, int at, long v) {
    Platform.putLong(b, BASE + at, LITTLE_ENDIAN ? v : Long.reverseBytes(v));
  }

  private static byte[] reversed(byte[] b, int from, int to) {
    byte[] r = new byte[to - from];
    for (int i = 0; i < r.length; i++) r[i] = b[to - 1 - i];
    return r;
  }
}
