package io.dsha.hash;

import java.nio.ByteOrder;

import org.apache.spark.unsafe.Platform;

/**
 * MurmurHash3_x64_128 (Austin Appleby's reference algorithm, seed 0 unless a prefix state is given) computed over a
 * byte stream that arrives in pieces: single bytes, little-endian words, or byte ranges.
 *
 * <p>The result is bit-identical to hashing the concatenated bytes in one call, which is what lets SPEC.md define a row
 * digest as "MurmurHash3_x64_128 of the canonical encoding" while the engine never materialises that encoding: up to 15
 * pending bytes live in two longs, and every full 16-byte block is mixed as soon as it is complete. One instance is
 * reused for every row of a task, so hashing allocates nothing.
 */
public final class Murmur3x64Stream {
  private static final long C1 = 0x87c37b91114253d5L;
  private static final long C2 = 0x4cf5ad432745937fL;
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

  private long h1;
  private long h2;
  // Pending bytes of the current block, little-endian: byte i of the block is bits 8*i.. of k1 (i < 8) or k2.
  private long k1;
  private long k2;
  private int pending;
  private long length;
  // Result of the last finish().
  private long out1;
  private long out2;

  /** Starts a new message with seed 0. */
  public void reset() {
    reset(0L, 0L, 0L);
  }

  /** Starts a new message from the state reached after hashing {@code length} bytes (a multiple of 16). */
  public void reset(long stateH1, long stateH2, long length) {
    this.h1 = stateH1;
    this.h2 = stateH2;
    this.k1 = 0L;
    this.k2 = 0L;
    this.pending = 0;
    this.length = length;
  }

  /** The h1 state word; with {@link #stateH2()} it resumes hashing after a block-aligned prefix. */
  public long stateH1() {
    return h1;
  }

  public long stateH2() {
    return h2;
  }

  public long length() {
    return length;
  }

  public void putByte(int b) {
    putSmall(b & 0xFFL, 1);
  }

  public void putShort(short s) {
    putSmall(s & 0xFFFFL, 2);
  }

  public void putInt(int i) {
    putSmall(i & 0xFFFFFFFFL, 4);
  }

  /** Appends the 8 bytes of {@code v}, least significant first. */
  public void putLong(long v) {
    int p = pending;
    if (p < 8) {
      if (p == 0) {
        k1 = v;
      } else {
        int s = p << 3;
        k1 |= v << s;
        k2 = v >>> (64 - s);
      }
      pending = p + 8;
    } else if (p == 8) {
      mix(k1, v);
      k1 = 0L;
      k2 = 0L;
      pending = 0;
    } else {
      int s = (p - 8) << 3;
      mix(k1, k2 | (v << s));
      k1 = v >>> (64 - s);
      k2 = 0L;
      pending = p - 8;
    }
    length += 8;
  }

  /** Appends {@code n} (1 to 7) bytes held in the low bits of {@code v}; higher bits must be zero. */
  private void putSmall(long v, int n) {
    int p = pending;
    long carry = 0L;
    if (p < 8) {
      int s = p << 3;
      k1 |= v << s;
      if (p + n > 8) {
        k2 |= v >>> (64 - s);
      }
    } else {
      int s = (p - 8) << 3;
      k2 |= v << s;
      if (p + n > 16) {
        carry = v >>> (64 - s);
      }
    }
    p += n;
    if (p >= 16) {
      mix(k1, k2);
      k1 = carry;
      k2 = 0L;
      p -= 16;
    }
    pending = p;
    length += n;
  }

  /** Appends {@code len} bytes starting at {@code offset} of {@code base} (Platform addressing, as UTF8String uses). */
  public void putBytes(Object base, long offset, int len) {
    if (pending == 0) {
      while (len >= 16) {
        mix(getLongLE(base, offset), getLongLE(base, offset + 8));
        length += 16;
        offset += 16;
        len -= 16;
      }
    }
    while (len >= 8) {
      putLong(getLongLE(base, offset));
      offset += 8;
      len -= 8;
    }
    if (len > 0) {
      // The last 1..7 bytes in at most three reads (4, 2, 1 bytes), never past the end of the range.
      long v = 0L;
      int shift = 0;
      if ((len & 4) != 0) {
        int i = Platform.getInt(base, offset);
        v = (LITTLE_ENDIAN ? i : Integer.reverseBytes(i)) & 0xFFFFFFFFL;
        shift = 32;
        offset += 4;
      }
      if ((len & 2) != 0) {
        short s = Platform.getShort(base, offset);
        v |= ((LITTLE_ENDIAN ? s : Short.reverseBytes(s)) & 0xFFFFL) << shift;
        shift += 16;
        offset += 2;
      }
      if ((len & 1) != 0) {
        v |= (Platform.getByte(base, offset) & 0xFFL) << shift;
      }
      putSmall(v, len);
    }
  }

  public void putBytes(byte[] bytes) {
    putBytes(bytes, Platform.BYTE_ARRAY_OFFSET, bytes.length);
  }

  /** Ends the message; the digest is then {@link #digestLow()} and {@link #digestHigh()}. */
  public void finish() {
    long a = h1;
    long b = h2;
    if (pending > 0) {
      if (pending > 8) {
        long t = k2 * C2;
        t = Long.rotateLeft(t, 33);
        t *= C1;
        b ^= t;
      }
      long t = k1 * C1;
      t = Long.rotateLeft(t, 31);
      t *= C2;
      a ^= t;
    }
    a ^= length;
    b ^= length;
    a += b;
    b += a;
    a = fmix64(a);
    b = fmix64(b);
    a += b;
    b += a;
    out1 = a;
    out2 = b;
  }

  /** h1 of the finished digest: bytes 0..7 of the 16-byte digest, little-endian; the low word as a 128-bit number. */
  public long digestLow() {
    return out1;
  }

  /** h2 of the finished digest: bytes 8..15, little-endian; the high word as a 128-bit number. */
  public long digestHigh() {
    return out2;
  }

  /** Writes the finished digest as 16 bytes (h1 then h2, each little-endian) into {@code target}. */
  public byte[] digestInto(byte[] target) {
    writeLongLE(target, 0, out1);
    writeLongLE(target, 8, out2);
    return target;
  }

  public byte[] digestBytes() {
    return digestInto(new byte[16]);
  }

  private void mix(long a, long b) {
    a *= C1;
    a = Long.rotateLeft(a, 31);
    a *= C2;
    h1 ^= a;
    h1 = Long.rotateLeft(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    b *= C2;
    b = Long.rotateLeft(b, 33);
    b *= C1;
    h2 ^= b;
    h2 = Long.rotateLeft(h2, 31);
    h2 += h1;
    h2 = h2 * 5 + 0x38495ab5;
  }

  private static long fmix64(long k) {
    k ^= k >>> 33;
    k *= 0xff51afd7ed558ccdL;
    k ^= k >>> 33;
    k *= 0xc4ceb9fe1a85ec53L;
    k ^= k >>> 33;
    return k;
  }

  private static long getLongLE(Object base, long offset) {
    long v = Platform.getLong(base, offset);
    return LITTLE_ENDIAN ? v : Long.reverseBytes(v);
  }

  static void writeLongLE(byte[] target, int at, long v) {
    for (int i = 0; i < 8; i++) {
      target[at + i] = (byte) (v >>> (i << 3));
    }
  }
}
