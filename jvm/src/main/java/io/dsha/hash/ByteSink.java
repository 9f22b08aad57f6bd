package io.dsha.hash;

/**
 * What the canonical encoders write into: a stream of bytes, little-endian words and byte ranges. A hash function
 * implements it (dsha-v1: {@link Murmur3x64Stream}). The fused "byte and value" forms exist because a presence marker
 * precedes almost every value, and one bounds check per pair is measurably faster than two.
 */
public interface ByteSink {
  void putByte(int b);

  /** The 2 bytes of {@code s}, least significant first. */
  void putShort(short s);

  /** The 4 bytes of {@code i}, least significant first. */
  void putInt(int i);

  /** The 8 bytes of {@code v}, least significant first. */
  void putLong(long v);

  /** The byte {@code a}, then the byte {@code b}. */
  void putByteAndByte(int a, int b);

  /** The byte {@code b}, then the 2 bytes of {@code s}. */
  void putByteAndShort(int b, short s);

  /** The byte {@code b}, then the 4 bytes of {@code i}. */
  void putByteAndInt(int b, int i);

  /** The byte {@code b}, then the 8 bytes of {@code v}. */
  void putByteAndLong(int b, long v);

  /** {@code len} bytes starting at {@code offset} of {@code base} (Platform addressing, as UTF8String uses). */
  void putBytes(Object base, long offset, int len);

  void putBytes(byte[] bytes);
}
