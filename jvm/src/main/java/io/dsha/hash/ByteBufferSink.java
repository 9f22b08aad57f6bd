package io.dsha.hash;

import java.util.Arrays;

import org.apache.spark.unsafe.Platform;

/**
 * A sink that keeps the bytes written into it, little-endian, in a growable array: for hashes that take a whole
 * message at once (the JDK's SHA-256 and HMAC) and for entries that must be sorted before they are written. Not final
 * only for the row hashers that extend it.
 */
public class ByteBufferSink implements ByteSink {
  private static final long BASE = Platform.BYTE_ARRAY_OFFSET;
  private byte[] bytes = new byte[256];
  private int length;

  /** Forgets every byte written. */
  public final void clear() {
    length = 0;
  }

  public final int length() {
    return length;
  }

  /** The backing array: bytes {@code [0, length())} were written. */
  public final byte[] array() {
    return bytes;
  }

  private int reserve(int n) {
    int at = length;
    if (at + n > bytes.length) {
      bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, at + n));
    }
    length = at + n;
    return at;
  }

  @Override
  public final void putByte(int b) {
    int at = reserve(1);
    bytes[at] = (byte) b;
  }

  @Override
  public final void putShort(short s) {
    int at = reserve(2);
    bytes[at] = (byte) s;
    bytes[at + 1] = (byte) (s >>> 8);
  }

  @Override
  public final void putInt(int i) {
    int at = reserve(4);
    for (int k = 0; k < 4; k++) {
      bytes[at + k] = (byte) (i >>> (8 * k));
    }
  }

  @Override
  public final void putLong(long v) {
    int at = reserve(8);
    for (int k = 0; k < 8; k++) {
      bytes[at + k] = (byte) (v >>> (8 * k));
    }
  }

  @Override
  public final void putByteAndByte(int a, int b) {
    putByte(a);
    putByte(b);
  }

  @Override
  public final void putByteAndShort(int b, short s) {
    putByte(b);
    putShort(s);
  }

  @Override
  public final void putByteAndInt(int b, int i) {
    putByte(b);
    putInt(i);
  }

  @Override
  public final void putByteAndLong(int b, long v) {
    putByte(b);
    putLong(v);
  }

  @Override
  public final void putBytes(Object base, long offset, int len) {
    int at = reserve(len);
    Platform.copyMemory(base, offset, bytes, BASE + at, len);
  }

  @Override
  public final void putBytes(byte[] b) {
    int at = reserve(b.length);
    System.arraycopy(b, 0, bytes, at, b.length);
  }
}
