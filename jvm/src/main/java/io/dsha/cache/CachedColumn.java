package io.dsha.cache;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.Platform;

/**
 * One column of a batch of Spark's in-memory cache (the default cache serializer's {@code DefaultCachedBatch}),
 * decoded a whole batch at a time into arrays, then written into rows in order. Spark's own reader decodes value by
 * value through several virtual calls per value; this is what makes reading a cached table cost ~3 times less.
 *
 * <p>The layout, Spark's since 1.x (its ColumnBuilder, NullableColumnBuilder, CompressibleColumnBuilder and
 * compression schemes), all integers in the platform's byte order: {@code [null count: int][row of each null: int]},
 * then for the compressible types {@code [scheme id: int][the non-null values, encoded]}, for binary and decimals
 * wider than 18 digits the non-null values as {@code [length: int][bytes]}. Values are written into a row exactly as
 * Spark's reader writes them (same writer calls, same values), so the rows are byte for byte Spark's.
 */
public final class CachedColumn {
  /** How a column's values are stored and written. */
  public static final int BOOLEAN = 0, BYTE = 1, SHORT = 2, INT = 3, LONG = 4, FLOAT = 5, DOUBLE = 6;
  /** Strings: compressible, values are {@code [length][bytes]}. */
  public static final int STRING = 7;
  /** Binary: not compressible, {@code [length][bytes]}. */
  public static final int BINARY = 8;
  /**
   * Decimals wider than 18 digits: as binary (the unscaled value's two's-complement bytes), which Spark's reader copies
   * into the row as they are (a slot of their length rounded to 8 bytes); a null keeps 16 bytes.
   */
  public static final int WIDE_DECIMAL = 9;

  private static final int PASS_THROUGH = 0, RUN_LENGTH = 1, DICTIONARY = 2, BOOLEAN_BIT_SET = 3, INT_DELTA = 4,
      LONG_DELTA = 5;

  private final int kind;
  private final int precision;
  private final int scale;

  private ByteBuffer buffer;
  private byte[] bytes;
  private int nullCount;
  private int count;
  private long[] values = new long[0];
  private int[] offsets = new int[0];
  private int[] lengths = new int[0];

  // Where the rows written so far have got to.
  private int nextValue;
  private int nullsSeen;
  private int nextNull;

  /**
   * @param kind      one of the constants above
   * @param precision for {@link #WIDE_DECIMAL}, the type's precision (else ignored)
   * @param scale     for {@link #WIDE_DECIMAL}, the type's scale (else ignored)
   */
  public CachedColumn(int kind, int precision, int scale) {
    if (kind < BOOLEAN || kind > WIDE_DECIMAL) throw new IllegalArgumentException("unknown column kind " + kind);
    this.kind = kind;
    this.precision = precision;
    this.scale = scale;
  }

  /**
   * Decodes this column's part of a batch of {@code rows} rows. Returns false, decoding nothing, for an encoding
   * it does not know (a scheme id this reader does not know, or one its type is never written with); throws if the
   * bytes end early. Then rows are written with {@link #write} for rows 0, 1, ... in order.
   */
  public boolean load(byte[] column, int rows) {
    ByteBuffer b = ByteBuffer.wrap(column).order(ByteOrder.nativeOrder());
    int nulls = b.getInt(0);
    if (nulls < 0 || nulls > rows) return false;
    int n = rows - nulls;
    int at = 4 + 4 * nulls;
    boolean known;
    reserve(n);
    if (kind == BINARY || kind == WIDE_DECIMAL) {
      known = true;
      readLengthPrefixed(b, at, n);
    } else {
      int scheme = b.getInt(at);
      known = decode(b, scheme, at + 4, n);
    }
    if (!known) return false;
    buffer = b;
    bytes = column;
    nullCount = nulls;
    count = n;
    nextValue = 0;
    nullsSeen = 0;
    nextNull = nulls > 0 ? b.getInt(4) : -1;
    return true;
  }

  /** Writes row {@code row}'s value into field {@code ordinal}: called for rows 0, 1, ... in order. */
  public void write(UnsafeRowWriter w, int ordinal, int row) {
    if (row == nextNull) {
      w.setNullAt(ordinal);
      // As Spark's reader does: a wide decimal keeps its 16 bytes, so that the row can be updated in place.
      if (kind == WIDE_DECIMAL) w.write(ordinal, (Decimal) null, precision, scale);
      nullsSeen++;
      nextNull = nullsSeen < nullCount ? buffer.getInt(4 + 4 * nullsSeen) : -1;
      return;
    }
    int j = nextValue++;
    switch (kind) {
      case BOOLEAN:
        w.write(ordinal, values[j] != 0);
        break;
      case BYTE:
        w.write(ordinal, (byte) values[j]);
        break;
      case SHORT:
        w.write(ordinal, (short) values[j]);
        break;
      case INT:
        w.write(ordinal, (int) values[j]);
        break;
      case LONG:
        w.write(ordinal, values[j]);
        break;
      case FLOAT:
        w.write(ordinal, Float.intBitsToFloat((int) values[j]));
        break;
      case DOUBLE:
        w.write(ordinal, Double.longBitsToDouble(values[j]));
        break;
      default:
        writeBytes(w, ordinal, offsets[j], lengths[j]);
    }
  }

  /**
   * What {@code w.write(ordinal, bytes, offset, length)} writes (the bytes, zero padding to a word, offset and size
   * in the slot), copied with System.arraycopy: Spark's copy through Unsafe costs several times more for short values.
   */
  private void writeBytes(UnsafeRowWriter w, int ordinal, int offset, int length) {
    int rounded = (length + 7) & ~7;
    w.grow(rounded);
    byte[] row = w.getBuffer();
    int at = w.cursor() - Platform.BYTE_ARRAY_OFFSET; // the row starts at the buffer's start
    if ((length & 7) != 0) Platform.putLong(row, Platform.BYTE_ARRAY_OFFSET + at + ((length >> 3) << 3), 0L);
    System.arraycopy(bytes, offset, row, at, length);
    w.write(ordinal, ((long) at << 32) | length);
    w.increaseCursor(rounded);
  }

  /** Non-null values in the loaded batch (for tests). */
  public int count() {
    return count;
  }

  /** The scheme id of an encoded compressible column (for tests: which encodings a table exercised). */
  public static int schemeOf(byte[] column) {
    ByteBuffer b = ByteBuffer.wrap(column).order(ByteOrder.nativeOrder());
    return b.getInt(4 + 4 * b.getInt(0));
  }

  private void reserve(int n) {
    if (kind >= STRING) {
      if (offsets.length < n) {
        offsets = new int[n];
        lengths = new int[n];
      }
    } else if (values.length < n) {
      values = new long[n];
    }
  }

  private boolean decode(ByteBuffer b, int scheme, int at, int n) {
    if (kind == STRING) {
      switch (scheme) {
        case PASS_THROUGH:
          readLengthPrefixed(b, at, n);
          return true;
        case RUN_LENGTH:
          stringRuns(b, at, n);
          return true;
        case DICTIONARY:
          stringDictionary(b, at, n);
          return true;
        default:
          return false;
      }
    }
    switch (scheme) {
      case PASS_THROUGH:
        plain(b, at, n);
        return true;
      case RUN_LENGTH:
        if (kind == FLOAT || kind == DOUBLE) return false;
        fixedRuns(b, at, n);
        return true;
      case DICTIONARY:
        if (kind != INT && kind != LONG) return false;
        fixedDictionary(b, at, n);
        return true;
      case BOOLEAN_BIT_SET:
        if (kind != BOOLEAN) return false;
        bits(b, at, n);
        return true;
      case INT_DELTA:
      case LONG_DELTA:
        if (kind != (scheme == INT_DELTA ? INT : LONG)) return false;
        deltas(b, at, n);
        return true;
      default:
        return false;
    }
  }

  private int width() {
    switch (kind) {
      case BOOLEAN:
      case BYTE:
        return 1;
      case SHORT:
        return 2;
      case INT:
      case FLOAT:
        return 4;
      default:
        return 8;
    }
  }

  /** A fixed-width value as Spark's column type reads it (a boolean is true when its byte is 1; floats as bits). */
  private long fixed(ByteBuffer b, int at) {
    switch (kind) {
      case BOOLEAN:
        return b.get(at) == 1 ? 1 : 0;
      case BYTE:
        return b.get(at);
      case SHORT:
        return b.getShort(at);
      case INT:
      case FLOAT:
        return b.getInt(at);
      default:
        return b.getLong(at);
    }
  }

  /** Values one after the other: {@link #fixed} with its choice of width made once, not per value. */
  private void plain(ByteBuffer b, int at, int n) {
    long[] v = values;
    switch (kind) {
      case BOOLEAN:
        for (int j = 0; j < n; j++) v[j] = b.get(at + j) == 1 ? 1 : 0;
        break;
      case BYTE:
        for (int j = 0; j < n; j++) v[j] = b.get(at + j);
        break;
      case SHORT:
        for (int j = 0; j < n; j++) v[j] = b.getShort(at + 2 * j);
        break;
      case INT:
      case FLOAT:
        for (int j = 0; j < n; j++) v[j] = b.getInt(at + 4 * j);
        break;
      default:
        for (int j = 0; j < n; j++) v[j] = b.getLong(at + 8 * j);
    }
  }

  private void fixedRuns(ByteBuffer b, int at, int n) {
    int w = width();
    for (int j = 0; j < n; ) {
      long v = fixed(b, at);
      int run = b.getInt(at + w);
      at += w + 4;
      if (run <= 0 || run > n - j) throw corrupt("a run of " + run + " values");
      for (int end = j + run; j < end; j++) values[j] = v;
    }
  }

  private void fixedDictionary(ByteBuffer b, int at, int n) {
    int size = b.getInt(at);
    at += 4;
    int w = width();
    long[] dictionary = new long[size];
    for (int i = 0; i < size; i++, at += w) dictionary[i] = fixed(b, at);
    for (int j = 0; j < n; j++, at += 2) values[j] = dictionary[b.getShort(at)];
  }

  private void bits(ByteBuffer b, int at, int n) {
    if (b.getInt(at) != n) throw corrupt("a bit set of " + b.getInt(at) + " values");
    at += 4;
    long word = 0;
    for (int j = 0; j < n; j++) {
      if ((j & 63) == 0) {
        word = b.getLong(at);
        at += 8;
      }
      values[j] = (word >>> (j & 63)) & 1;
    }
  }

  /** Int and long deltas: a byte, or the byte -128 then the whole value. */
  private void deltas(ByteBuffer b, int at, int n) {
    boolean ints = kind == INT;
    long previous = 0;
    for (int j = 0; j < n; j++) {
      byte delta = b.get(at++);
      if (delta != Byte.MIN_VALUE) {
        previous = ints ? (int) (previous + delta) : previous + delta;
      } else if (ints) {
        previous = b.getInt(at);
        at += 4;
      } else {
        previous = b.getLong(at);
        at += 8;
      }
      values[j] = previous;
    }
  }

  private void readLengthPrefixed(ByteBuffer b, int at, int n) {
    for (int j = 0; j < n; j++) at = lengthPrefixed(b, at, j);
  }

  /** Reads the {@code [length][bytes]} value at {@code at} as value {@code j}; returns where the next one starts. */
  private int lengthPrefixed(ByteBuffer b, int at, int j) {
    int length = b.getInt(at);
    if (length < 0 || length > b.limit() - at - 4) throw corrupt("a value of " + length + " bytes");
    offsets[j] = at + 4;
    lengths[j] = length;
    return at + 4 + length;
  }

  private void stringRuns(ByteBuffer b, int at, int n) {
    for (int j = 0; j < n; ) {
      int next = lengthPrefixed(b, at, j);
      int run = b.getInt(next);
      at = next + 4;
      if (run <= 0 || run > n - j) throw corrupt("a run of " + run + " values");
      for (int end = j + run, first = j++; j < end; j++) {
        offsets[j] = offsets[first];
        lengths[j] = lengths[first];
      }
    }
  }

  private void stringDictionary(ByteBuffer b, int at, int n) {
    int size = b.getInt(at);
    at += 4;
    int[] starts = new int[size];
    int[] sizes = new int[size];
    for (int i = 0; i < size; i++) {
      int length = b.getInt(at);
      if (length < 0 || length > b.limit() - at - 4) throw corrupt("a value of " + length + " bytes");
      starts[i] = at + 4;
      sizes[i] = length;
      at += 4 + length;
    }
    for (int j = 0; j < n; j++, at += 2) {
      short i = b.getShort(at);
      offsets[j] = starts[i];
      lengths[j] = sizes[i];
    }
  }

  private static IllegalStateException corrupt(String what) {
    return new IllegalStateException("dsha: a cached batch column does not decode (" + what + ")");
  }
}
