package io.dsha.encoding;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.UUID;

import io.dsha.hash.Murmur3x64Stream;
import org.apache.spark.types.variant.Variant;
import org.apache.spark.unsafe.types.VariantVal;

/**
 * Encodes the logical value of a variant (SPEC.md, "Variant"): a tag byte per value, integers of every width as one
 * integer type, decimals by normalised value, strings however they are stored, and objects independently of field
 * order (like maps). One instance per column path; it keeps a hash stream per object nesting level.
 */
public final class VariantEncoder {
  static final int NULL = 0;
  static final int BOOLEAN = 1;
  static final int INTEGER = 2;
  static final int FLOAT = 3;
  static final int DOUBLE = 4;
  static final int DECIMAL = 5;
  static final int DATE = 6;
  static final int TIMESTAMP = 7;
  static final int TIMESTAMP_NTZ = 8;
  static final int STRING = 9;
  static final int BINARY = 10;
  static final int UUID_TAG = 11;
  static final int ARRAY = 12;
  static final int OBJECT = 13;

  private final String path;
  private final ArrayList<Murmur3x64Stream> levels = new ArrayList<>();

  public VariantEncoder(String path) {
    this.path = path;
  }

  public void write(Murmur3x64Stream h, VariantVal v) {
    write(h, new Variant(v.getValue(), v.getMetadata()), 0);
  }

  private void write(Murmur3x64Stream h, Variant v, int depth) {
    switch (v.getType()) {
      case NULL:
        h.putByte(NULL);
        break;
      case BOOLEAN:
        h.putByte(BOOLEAN);
        h.putByte(v.getBoolean() ? 1 : 0);
        break;
      case LONG:
        h.putByte(INTEGER);
        h.putLong(v.getLong());
        break;
      case FLOAT:
        h.putByte(FLOAT);
        h.putInt(Canonical.floatBits(v.getFloat()));
        break;
      case DOUBLE:
        h.putByte(DOUBLE);
        h.putLong(Canonical.doubleBits(v.getDouble()));
        break;
      case DECIMAL:
        h.putByte(DECIMAL);
        putText(h, canonicalDecimal(v.getDecimal()));
        break;
      case DATE:
        h.putByte(DATE);
        h.putInt((int) v.getLong());
        break;
      case TIMESTAMP:
        h.putByte(TIMESTAMP);
        h.putLong(v.getLong());
        break;
      case TIMESTAMP_NTZ:
        h.putByte(TIMESTAMP_NTZ);
        h.putLong(v.getLong());
        break;
      case STRING:
        h.putByte(STRING);
        putText(h, v.getString());
        break;
      case BINARY:
        h.putByte(BINARY);
        Canonical.putBinary(h, v.getBinary());
        break;
      case UUID:
        h.putByte(UUID_TAG);
        UUID u = v.getUuid();
        h.putLong(Long.reverseBytes(u.getMostSignificantBits()));
        h.putLong(Long.reverseBytes(u.getLeastSignificantBits()));
        break;
      case ARRAY: {
        h.putByte(ARRAY);
        int n = v.arraySize();
        h.putInt(n);
        for (int i = 0; i < n; i++) {
          write(h, v.getElementAtIndex(i), depth);
        }
        break;
      }
      case OBJECT: {
        h.putByte(OBJECT);
        int n = v.objectSize();
        Murmur3x64Stream entry = level(depth);
        long low = 0L;
        long high = 0L;
        for (int i = 0; i < n; i++) {
          Variant.ObjectField f = v.getFieldAtIndex(i);
          entry.reset();
          putText(entry, f.key);
          write(entry, f.value, depth + 1);
          entry.finish();
          long l = entry.digestLow();
          long sum = low + l;
          high += entry.digestHigh() + (Long.compareUnsigned(sum, low) < 0 ? 1L : 0L);
          low = sum;
        }
        h.putInt(n);
        h.putLong(low);
        h.putLong(high);
        break;
      }
      default:
        throw new IllegalArgumentException(
            "dsha: variant value of type " + v.getType() + " in " + path + " is not supported by dsha algorithm v1");
    }
  }

  private Murmur3x64Stream level(int depth) {
    while (levels.size() <= depth) {
      levels.add(new Murmur3x64Stream());
    }
    return levels.get(depth);
  }

  private static void putText(Murmur3x64Stream h, String s) {
    Canonical.putBinary(h, s.getBytes(StandardCharsets.UTF_8));
  }

  /** Plain notation of the value with trailing zeros removed: 1.50 and 1.5 are "1.5", 100 is "100", zero is "0". */
  static String canonicalDecimal(BigDecimal d) {
    if (d.signum() == 0) {
      return "0";
    }
    return d.stripTrailingZeros().toPlainString();
  }
}
