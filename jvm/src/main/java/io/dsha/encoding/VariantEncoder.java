package io.dsha.encoding;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

import io.dsha.algorithm.EntrySet;
import io.dsha.hash.ByteSink;
import io.dsha.shims.VariantAccess;

/**
 * Encodes the logical value of a variant (SPEC.md §3.6): a tag byte per value, integers of every width as one integer
 * type, decimals by normalised value, strings however they are stored, and objects independently of field order
 * (an {@link EntrySet}, like maps). The Spark line's variant classes are read through {@link VariantAccess}. One
 * instance per column path; it keeps an entry set per object nesting level.
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
  private final String algorithm;
  private final VariantAccess access;
  private final Supplier<EntrySet> newEntrySet;
  private final ArrayList<EntrySet> levels = new ArrayList<>();

  public VariantEncoder(String path, String algorithm, VariantAccess access, Supplier<EntrySet> newEntrySet) {
    this.path = path;
    this.algorithm = algorithm;
    this.access = access;
    this.newEntrySet = newEntrySet;
  }

  /** Writes a variant column value (the Spark line's VariantVal). */
  public void write(ByteSink h, Object variantValue) {
    write(h, access.root(variantValue), 0);
  }

  private void write(ByteSink h, Object v, int depth) {
    VariantAccess a = access;
    switch (a.kind(v)) {
      case NULL:
        h.putByte(NULL);
        break;
      case BOOLEAN:
        h.putByteAndByte(BOOLEAN, a.getBoolean(v) ? 1 : 0);
        break;
      case INTEGER:
        h.putByteAndLong(INTEGER, a.getLong(v));
        break;
      case FLOAT:
        h.putByteAndInt(FLOAT, Canonical.floatBits(a.getFloat(v)));
        break;
      case DOUBLE:
        h.putByteAndLong(DOUBLE, Canonical.doubleBits(a.getDouble(v)));
        break;
      case DECIMAL:
        h.putByte(DECIMAL);
        putText(h, canonicalDecimal(a.getDecimal(v)));
        break;
      case DATE:
        h.putByteAndInt(DATE, (int) a.getLong(v));
        break;
      case TIMESTAMP:
        h.putByteAndLong(TIMESTAMP, a.getLong(v));
        break;
      case TIMESTAMP_NTZ:
        h.putByteAndLong(TIMESTAMP_NTZ, a.getLong(v));
        break;
      case STRING:
        h.putByte(STRING);
        putText(h, a.getString(v));
        break;
      case BINARY:
        h.putByte(BINARY);
        Canonical.putBinary(h, a.getBinary(v));
        break;
      case UUID: {
        h.putByte(UUID_TAG);
        UUID u = a.getUuid(v);
        h.putLong(Long.reverseBytes(u.getMostSignificantBits()));
        h.putLong(Long.reverseBytes(u.getLeastSignificantBits()));
        break;
      }
      case ARRAY: {
        int n = a.arraySize(v);
        h.putByteAndInt(ARRAY, n);
        for (int i = 0; i < n; i++) {
          write(h, a.element(v, i), depth);
        }
        break;
      }
      case OBJECT: {
        h.putByte(OBJECT);
        int n = a.objectSize(v);
        EntrySet fields = level(depth);
        fields.clear();
        for (int i = 0; i < n; i++) {
          Map.Entry<String, Object> f = a.field(v, i);
          ByteSink entry = fields.begin();
          putText(entry, f.getKey());
          write(entry, f.getValue(), depth + 1);
          fields.end();
        }
        fields.writeTo(h, n);
        break;
      }
      default:
        throw new IllegalArgumentException(
            "dsha: variant value of type " + a.typeName(v) + " in " + path + " is not supported by " + algorithm);
    }
  }

  private EntrySet level(int depth) {
    while (levels.size() <= depth) {
      levels.add(newEntrySet.get());
    }
    return levels.get(depth);
  }

  private static void putText(ByteSink h, String s) {
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
