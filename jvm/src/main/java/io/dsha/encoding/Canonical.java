package io.dsha.encoding;

import java.math.BigDecimal;
import java.math.BigInteger;

import io.dsha.hash.ByteSink;
import org.apache.spark.sql.types.Decimal;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.CalendarInterval;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Canonical encodings of leaf values (SPEC.md §3), written straight into a byte sink. Called by both
 * the interpreted writers and the generated code, so that the two paths cannot drift apart.
 */
public final class Canonical {
  private Canonical() {}

  public static final int NULL_MARKER = 0;
  public static final int VALUE_MARKER = 1;

  /** IEEE-754 bits with -0.0 folded into 0.0 and every NaN into the canonical quiet NaN 0x7fc00000. */
  public static int floatBits(float f) {
    return f == 0.0f ? 0 : Float.floatToIntBits(f);
  }

  /** IEEE-754 bits with -0.0 folded into 0.0 and every NaN into the canonical quiet NaN 0x7ff8000000000000. */
  public static long doubleBits(double d) {
    return d == 0.0d ? 0L : Double.doubleToLongBits(d);
  }

  public static void putString(ByteSink h, UTF8String s) {
    int n = s.numBytes();
    h.putInt(n);
    h.putBytes(s.getBaseObject(), s.getBaseOffset(), n);
  }

  /** The value marker, then the string: the fused form of putByte(VALUE_MARKER) + putString for generated code. */
  public static void putMarkedString(ByteSink h, UTF8String s) {
    int n = s.numBytes();
    h.putByteAndInt(VALUE_MARKER, n);
    h.putBytes(s.getBaseObject(), s.getBaseOffset(), n);
  }

  public static void putBinary(ByteSink h, byte[] b) {
    h.putInt(b.length);
    h.putBytes(b, Platform.BYTE_ARRAY_OFFSET, b.length);
  }

  public static void putInterval(ByteSink h, CalendarInterval i) {
    h.putInt(i.months);
    h.putInt(i.days);
    h.putLong(i.microseconds);
  }

  private static volatile java.lang.reflect.Field nanosMicros;
  private static volatile java.lang.reflect.Field nanosWithin;

  /**
   * Spark 4.3's TimestampNanosVal: epoch microseconds (i64), then nanoseconds within the microsecond (i16). Read
   * reflectively because this jar is compiled against Spark 4.0, where the class does not exist.
   */
  public static void putTimestampNanos(ByteSink h, Object v) {
    try {
      if (nanosMicros == null) {
        Class<?> c = v.getClass();
        nanosWithin = c.getField("nanosWithinMicro");
        nanosMicros = c.getField("epochMicros");
      }
      h.putLong(nanosMicros.getLong(v));
      h.putShort(nanosWithin.getShort(v));
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("dsha: unexpected nanosecond timestamp value " + v.getClass(), e);
    }
  }

  /** The unscaled value of a decimal(p, s) with p <= 18 at scale s. */
  public static long unscaledLong(Decimal d, int scale) {
    return d.scale() == scale ? d.toUnscaledLong() : unscaled(d, scale).longValueExact();
  }

  /** decimal(p, s) with p > 18: the unscaled value at scale s as a signed 128-bit integer, low word first. */
  public static void putDecimal128(ByteSink h, Decimal d, int scale) {
    BigInteger u = unscaled(d, scale);
    if (u.bitLength() < 64) {
      long lo = u.longValue();
      h.putLong(lo);
      h.putLong(lo >> 63);
    } else {
      h.putLong(u.longValue());
      h.putLong(u.shiftRight(64).longValue());
    }
  }

  private static BigInteger unscaled(Decimal d, int scale) {
    BigDecimal b = d.toJavaBigDecimal();
    if (b.scale() != scale) {
      b = b.setScale(scale); // exact: Spark keeps values of decimal(p, s) at scale s; this only guards the invariant
    }
    return b.unscaledValue();
  }
}
