package io.dsha.shims;

import java.math.BigDecimal;
import java.util.Map;
import java.util.UUID;

/**
 * How shared code reads a variant value on a Spark line that has variants: the contract a line's shim implements
 * ({@code SparkShims.variantAccess}). It speaks JDK types only, so a shim never depends on dsha's encoding and the
 * encoding never depends on a Spark line's variant classes. A node is the shim's own object for a (nested) value.
 */
public interface VariantAccess {
  /** The logical kinds of variant values; {@link #OTHER} is anything this contract does not know. */
  enum Kind {
    NULL, BOOLEAN, INTEGER, FLOAT, DOUBLE, DECIMAL, DATE, TIMESTAMP, TIMESTAMP_NTZ, STRING, BINARY, UUID, ARRAY,
    OBJECT, OTHER
  }

  /** The root node of a variant column value (Spark's VariantVal). */
  Object root(Object variantValue);

  Kind kind(Object node);

  /** Spark's name of the node's type, for error messages. */
  String typeName(Object node);

  boolean getBoolean(Object node);

  /** INTEGER of any width, DATE (days), TIMESTAMP and TIMESTAMP_NTZ (microseconds). */
  long getLong(Object node);

  float getFloat(Object node);

  double getDouble(Object node);

  BigDecimal getDecimal(Object node);

  String getString(Object node);

  byte[] getBinary(Object node);

  UUID getUuid(Object node);

  int arraySize(Object node);

  Object element(Object node, int i);

  int objectSize(Object node);

  /** Field {@code i} of an object, in storage order: its key and its value node. */
  Map.Entry<String, Object> field(Object node, int i);
}
