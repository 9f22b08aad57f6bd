package io.dsha.hash;

import java.nio.ByteOrder;
import java.util.Arrays;

import org.apache.spark.unsafe.Platform;

/**
 * A sink that keeps the bytes written into it, little-endian, in a growable array: for hashes that take a whole
 * message at once (the JDK's SHA-256 and HMAC) and for entries that must be sorted before they are written. Not final
 * only for the row hashers that extend it.
 */
public class ByteBufferSink implements ByteSink {
  private static final long BASE = Platform.BYTE_ARRAY_OFFSET;
  private static final boolean LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
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

  // Words go in with one unaligned store each (reserve made room): the JDK 17 JIT does not merge a loop of byte
  // stores, and byte-wise writes were a tenth of a keyed digest's time.
  @Override
  public final void putShort(short s) {
    int at = reserve(2);
    Platform.putShort(bytes, BASE + at, LITTLE_ENDIAN ? s : Short.reverseBytes(s));
  }

  @Override
  public final void putInt(int i) {
    int at = reserve(4);
    Platform.putInt(bytes, BASE + at, LITTLE_ENDIAN ? i : Integer.reverseBytes(i));
  }

  @Override
  public final void putLong(long v) {
    int at = reserve(8);
    Platform.putLong(bytes, BASE + at, LITTLE_ENDIAN ? v : Long.reverseBytes(v));
  }

  @Override
  public final void putByteAndByte(int a, int b) {
    int at = reserve(2);
    bytes[at] = (byte) a;
    bytes[at + 1] = (byte) b;
  }

  @Override
  public final void putByteAndShort(int b, short s) {
    int at = reserve(3);
    bytes[at] = (byte) b;
    Platform.putShort(bytes, BASE + at + 1, LITTLE_ENDIAN ? s : Short.reverseBytes(s));
  }

  @Override
  public final void putByteAndInt(int b, int i) {
    int at = reserve(5);
    bytes[at] = (byte) b;
    Platform.putInt(bytes, BASE + at + 1, LITTLE_ENDIAN ? i : Integer.reverseBytes(i));
  }

  @Override
  public final void putByteAndLong(int b, long v) {
    int at = reserve(9);
    bytes[at] = (byte) b;
    Platform.putLong(bytes, BASE + at + 1, LITTLE_ENDIAN ? v : Long.reverseBytes(v));
  }

  @Override
  public final void putBytes(Object base, long offset, int len) {
    int at = reserve(len);
    if (base instanceof byte[]) {
      // On-heap values (rows, strings): the arraycopy intrinsic, not Unsafe.copyMemory's per-call argument checks,
      // which cost more than the copy of a short string.
      System.arraycopy((byte[]) base, (int) (offset - BASE), bytes, at, len);
    } else {
      Platform.copyMemory(base, offset, bytes, BASE + at, len);
    }
  }

  @Override
  public final void putBytes(byte[] b) {
    int at = reserve(b.length);
    System.arraycopy(b, 0, bytes, at, b.length);
  }
}
