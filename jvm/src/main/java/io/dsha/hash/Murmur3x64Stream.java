package io.dsha.hash;

import java.nio.ByteOrder;

import org.apache.spark.unsafe.Platform;

/**
 * MurmurHash3_x64_128 (Austin Appleby's reference algorithm, seed 0 unless a prefix state is given) computed over a
 * byte stream that arrives in pieces: single bytes, little-endian words, or byte ranges.
 *
 * <p>The result is bit-identical to hashing the concatenated bytes in one call, which is what lets SPEC.md define a row
 * digest as "MurmurHash3_x64_128 of the canonical encoding" while the engine never materialises a whole encoding. The
 * pieces are stored into a small reused buffer (one bounds check and one store per piece) and mixed 16 bytes at a time
 * in a tight loop when it fills, or straight from the source for long byte ranges; the buffer never holds more than
 * {@link #CAPACITY} bytes, so hashing a 64 MB string or a wide row allocates nothing. One instance is reused for every
 * row of a task. Not final only for {@link io.dsha.algorithm.v1.Murmur3RowHasher}, which adds the row's start state.
 */
public class Murmur3x64Stream implements ByteSink {
  private static final long C1 = 0x87c37b91114253d5L;
  private static final long C2 = 0x4cf5ad432745937fL;
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
  // Word stores and loads at any byte offset (x86, aarch64); elsewhere bytes are moved one at a time.
  private static final boolean WORDS = LITTLE_ENDIAN && Platform.unaligned();
  private static final long BASE = Platform.BYTE_ARRAY_OFFSET;

  /** Bytes buffered before they are mixed: a multiple of 16, large enough for most rows of a few dozen columns. */
  static final int CAPACITY = 512;
  /** Byte ranges up to this length are copied into the buffer word by word rather than by Unsafe.copyMemory. */
  private static final int SHORT_COPY = 64;

  // Bytes [0, pos) of the message not yet mixed, starting at a block boundary; 16 spare bytes let a piece of up to
  // 16 bytes be stored before the buffer is mixed.
  private final byte[] buffer = new byte[CAPACITY + 16];
  private int pos;
  private long h1;
  private long h2;
  // Bytes of the message already mixed into h1/h2 (always a multiple of 16).
  private long mixed;
  // Result of the last finish().
  private long out1;
  private long out2;

  /** Starts a new message with seed 0. */
  public void reset() {
    reset(0L, 0L, 0L);
  }

  /** Starts a new message from the state reached after hashing {@code length} bytes (a multiple of 16). */
  public void reset(long stateH1, long stateH2, long length) {
    if ((length & 15) != 0) {
      throw new IllegalArgumentException("a resumed state must follow a whole number of 16-byte blocks: " + length);
    }
    this.h1 = stateH1;
    this.h2 = stateH2;
    this.mixed = length;
    this.pos = 0;
  }

  /** The h1 state word; with {@link #stateH2()}, it resumes hashing when {@link #length()} is a multiple of 16. */
  public long stateH1() {
    mixBuffered();
    return h1;
  }

  public long stateH2() {
    mixBuffered();
    return h2;
  }

  /** Bytes appended since the start of the message (including a resumed prefix). */
  public long length() {
    return mixed + pos;
  }

  public void putByte(int b) {
    int p = room(1);
    buffer[p] = (byte) b;
    pos = p + 1;
  }

  public void putShort(short s) {
    int p = room(2);
    buffer[p] = (byte) s;
    buffer[p + 1] = (byte) (s >>> 8);
    pos = p + 2;
  }

  public void putInt(int i) {
    int p = room(4);
    storeInt(p, i);
    pos = p + 4;
  }

  /** Appends the 8 bytes of {@code v}, least significant first. */
  public void putLong(long v) {
    int p = room(8);
    storeLong(p, v);
    pos = p + 8;
  }

  // A byte followed by a value in one call: the generated code writes a value marker before almost every value.

  /** Appends the byte {@code a}, then the byte {@code b}. */
  public void putByteAndByte(int a, int b) {
    int p = room(2);
    buffer[p] = (byte) a;
    buffer[p + 1] = (byte) b;
    pos = p + 2;
  }

  /** Appends the byte {@code b}, then the 2 bytes of {@code s}, least significant first. */
  public void putByteAndShort(int b, short s) {
    int p = room(3);
    buffer[p] = (byte) b;
    buffer[p + 1] = (byte) s;
    buffer[p + 2] = (byte) (s >>> 8);
    pos = p + 3;
  }

  /** Appends the byte {@code b}, then the 4 bytes of {@code i}, least significant first. */
  public void putByteAndInt(int b, int i) {
    int p = room(5);
    buffer[p] = (byte) b;
    storeInt(p + 1, i);
    pos = p + 5;
  }

  /** Appends the byte {@code b}, then the 8 bytes of {@code v}, least significant first. */
  public void putByteAndLong(int b, long v) {
    int p = room(9);
    buffer[p] = (byte) b;
    storeLong(p + 1, v);
    pos = p + 9;
  }

  /** Appends {@code len} bytes starting at {@code offset} of {@code base} (Platform addressing, as UTF8String uses). */
  public void putBytes(Object base, long offset, int len) {
    int p = pos;
    if (p + len <= CAPACITY) {
      if (WORDS && len <= SHORT_COPY) {
        copyShort(base, offset, p, len);
      } else {
        Platform.copyMemory(base, offset, buffer, BASE + p, len);
      }
      pos = p + len;
      return;
    }
    // Complete the buffer's last block from the source, mix the buffer, then whole blocks straight from the source.
    int fill = (16 - (p & 15)) & 15;
    if (fill > len) {
      fill = len;
    }
    Platform.copyMemory(base, offset, buffer, BASE + p, fill);
    pos = p + fill;
    offset += fill;
    len -= fill;
    mixBuffered(); // the buffer is now empty, unless the range ended before the block did (then len is 0)
    while (len >= 16) {
      mix(loadLong(base, offset), loadLong(base, offset + 8));
      mixed += 16;
      offset += 16;
      len -= 16;
    }
    Platform.copyMemory(base, offset, buffer, BASE + pos, len); // the last 0..15 bytes
    pos += len;
  }

  /**
   * Copies a short range (most strings) into the buffer at {@code p} with word loads and stores, reading and writing
   * only bytes inside the range: the last word (or int, or byte) overlaps the one before it instead of running past
   * the end. Unsafe.copyMemory costs more than the copy itself at these lengths.
   */
  private void copyShort(Object base, long offset, int p, int len) {
    long to = BASE + p;
    if (len >= 8) {
      int i = 0;
      for (; i + 8 <= len; i += 8) {
        Platform.putLong(buffer, to + i, Platform.getLong(base, offset + i));
      }
      if (i < len) {
        Platform.putLong(buffer, to + len - 8, Platform.getLong(base, offset + len - 8));
      }
    } else if (len >= 4) {
      Platform.putInt(buffer, to, Platform.getInt(base, offset));
      Platform.putInt(buffer, to + len - 4, Platform.getInt(base, offset + len - 4));
    } else if (len > 0) {
      buffer[p] = Platform.getByte(base, offset);
      buffer[p + (len >> 1)] = Platform.getByte(base, offset + (len >> 1));
      buffer[p + len - 1] = Platform.getByte(base, offset + len - 1);
    }
  }

  public void putBytes(byte[] bytes) {
    putBytes(bytes, BASE, bytes.length);
  }

  /**
   * Ends the message; the digest is then {@link #digestLow()} and {@link #digestHigh()}. The stream must be
   * {@link #reset} before it takes another message.
   */
  public void finish() {
    int p = pos;
    int whole = p & ~15;
    mixBlocks(whole);
    long a = h1;
    long b = h2;
    int rest = p - whole; // 0..15 bytes after the last whole block, read in place as two words with the tail masked
    if (rest > 0) {
      long k1 = loadLong(buffer, BASE + whole);
      long k2 = loadLong(buffer, BASE + whole + 8);
      if (rest > 8) {
        long t = (k2 & (-1L >>> ((16 - rest) << 3))) * C2;
        t = Long.rotateLeft(t, 33);
        t *= C1;
        b ^= t;
      } else if (rest < 8) {
        k1 &= -1L >>> ((8 - rest) << 3);
      }
      long t = k1 * C1;
      t = Long.rotateLeft(t, 31);
      t *= C2;
      a ^= t;
    }
    long length = mixed + p;
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
    if (WORDS && target.length >= 16) {
      Platform.putLong(target, BASE, out1);
      Platform.putLong(target, BASE + 8, out2);
    } else {
      writeLongLE(target, 0, out1);
      writeLongLE(target, 8, out2);
    }
    return target;
  }

  public byte[] digestBytes() {
    return digestInto(new byte[16]);
  }

  /** The buffer position at which {@code n} (at most 16) more bytes fit, mixing the buffer first if needed. */
  private int room(int n) {
    int p = pos;
    if (p + n > CAPACITY + 16) {
      mixBuffered();
      p = pos;
    }
    return p;
  }

  /** Mixes every whole block in the buffer and moves the remaining 0..15 bytes to its start. */
  private void mixBuffered() {
    int p = pos;
    int whole = p & ~15;
    if (whole == 0) {
      return;
    }
    mixBlocks(whole);
    mixed += whole;
    int rest = p - whole;
    System.arraycopy(buffer, whole, buffer, 0, rest);
    pos = rest;
  }

  /** Mixes the blocks in buffer bytes [0, whole) into h1/h2; the caller accounts for them. */
  private void mixBlocks(int whole) {
    for (int i = 0; i < whole; i += 16) {
      mix(loadLong(buffer, BASE + i), loadLong(buffer, BASE + i + 8));
    }
  }

  private void mix(long k1, long k2) {
    k1 *= C1;
    k1 = Long.rotateLeft(k1, 31);
    k1 *= C2;
    h1 ^= k1;
    h1 = Long.rotateLeft(h1, 27);
    h1 += h2;
    h1 = h1 * 5 + 0x52dce729;
    k2 *= C2;
    k2 = Long.rotateLeft(k2, 33);
    k2 *= C1;
    h2 ^= k2;
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

  private void storeInt(int at, int v) {
    if (WORDS) {
      Platform.putInt(buffer, BASE + at, v);
    } else {
      for (int i = 0; i < 4; i++) {
        buffer[at + i] = (byte) (v >>> (i << 3));
      }
    }
  }

  private void storeLong(int at, long v) {
    if (WORDS) {
      Platform.putLong(buffer, BASE + at, v);
    } else {
      writeLongLE(buffer, at, v);
    }
  }

  /** The 8 bytes at {@code offset} of {@code base} as a little-endian long. */
  private static long loadLong(Object base, long offset) {
    if (WORDS) {
      return Platform.getLong(base, offset);
    }
    long v = 0L;
    for (int i = 7; i >= 0; i--) {
      v = (v << 8) | (Platform.getByte(base, offset + i) & 0xFFL);
    }
    return v;
  }

  static void writeLongLE(byte[] target, int at, long v) {
    for (int i = 0; i < 8; i++) {
      target[at + i] = (byte) (v >>> (i << 3));
    }
  }
}
