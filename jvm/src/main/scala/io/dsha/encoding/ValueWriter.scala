package io.dsha.encoding

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types.{DataType, Decimal => SparkDecimal}
import org.apache.spark.unsafe.types.{CalendarInterval, UTF8String}

import io.dsha.encoding.Encoding.Kind
import io.dsha.hash.Murmur3x64Stream
import io.dsha.shims.SparkShims

/**
 * The interpreted twin of [[CodegenWriter]]: writes the canonical encoding of a non-null value into a hash stream.
 * Writers are built once per task from an [[Encoding]]; map and variant writers own the streams their entries need.
 */
abstract class ValueWriter {
  def write(h: Murmur3x64Stream, value: Any): Unit
}

object ValueWriter {

  def apply(encoding: Encoding, path: String = "value"): ValueWriter = encoding match {
    case Encoding.Leaf(kind, _, _) => leaf(kind, path)
    case Encoding.Decimal(_, scale, _) if encoding.asInstanceOf[Encoding.Decimal].wide =>
      (h, v) => Canonical.putDecimal128(h, v.asInstanceOf[SparkDecimal], scale)
    case Encoding.Decimal(_, scale, _) =>
      (h, v) => Canonical.putDecimal64(h, v.asInstanceOf[SparkDecimal], scale)
    case Encoding.Array(element, _) => new ArrayWriter(element, ValueWriter(element, path + "[]"))
    case m: Encoding.Map => new MapWriter(m, ValueWriter(m.key, path + ".key"), ValueWriter(m.value, path + ".value"))
    case s: Encoding.Struct => new StructWriter(s, s.fields.map(f => ValueWriter(f.encoding, s"$path.${f.name}")))
  }

  private def leaf(kind: Kind, path: String): ValueWriter = kind match {
    case Kind.Bool => (h, v) => h.putByte(if (v.asInstanceOf[Boolean]) 1 else 0)
    case Kind.Int8 => (h, v) => h.putByte(v.asInstanceOf[Byte])
    case Kind.Int16 => (h, v) => h.putShort(v.asInstanceOf[Short])
    case Kind.Int32 => (h, v) => h.putInt(v.asInstanceOf[Int])
    case Kind.Int64 => (h, v) => h.putLong(v.asInstanceOf[Long])
    case Kind.Float32 => (h, v) => Canonical.putFloat(h, v.asInstanceOf[Float])
    case Kind.Float64 => (h, v) => Canonical.putDouble(h, v.asInstanceOf[Double])
    case Kind.Utf8 => (h, v) => Canonical.putString(h, v.asInstanceOf[UTF8String])
    case Kind.Bytes => (h, v) => Canonical.putBinary(h, v.asInstanceOf[Array[Byte]])
    case Kind.Interval => (h, v) => Canonical.putInterval(h, v.asInstanceOf[CalendarInterval])
    case Kind.TimestampNanos => (h, v) => Canonical.putTimestampNanos(h, v)
    case Kind.Void => (_, _) => ()
    case Kind.Variant => SparkShims.variantWriter(path)
  }

  /** Marker byte, then the value when present: the layout of every element, entry part and field. */
  @inline private def writeNullable(h: Murmur3x64Stream, w: ValueWriter, value: Any): Unit =
    if (value == null) h.putByte(Canonical.NULL_MARKER)
    else {
      h.putByte(Canonical.VALUE_MARKER)
      w.write(h, value)
    }

  private final class ArrayWriter(element: Encoding, elementWriter: ValueWriter) extends ValueWriter {
    private val elementType: DataType = element.sparkType
    def write(h: Murmur3x64Stream, value: Any): Unit = {
      val a = value.asInstanceOf[ArrayData]
      val n = a.numElements()
      h.putInt(n)
      var i = 0
      while (i < n) {
        writeNullable(h, elementWriter, if (a.isNullAt(i)) null else a.get(i, elementType))
        i += 1
      }
    }
  }

  /** Entries are hashed on their own and summed mod 2^128, so entry order cannot matter. */
  private final class MapWriter(m: Encoding.Map, keyWriter: ValueWriter, valueWriter: ValueWriter)
      extends ValueWriter {
    private val entry = new Murmur3x64Stream
    private val keyType = m.key.sparkType
    private val valueType = m.value.sparkType
    def write(h: Murmur3x64Stream, value: Any): Unit = {
      val map = value.asInstanceOf[MapData]
      val keys = map.keyArray()
      val values = map.valueArray()
      val n = map.numElements()
      var low = 0L
      var high = 0L
      var i = 0
      while (i < n) {
        entry.reset()
        writeNullable(entry, keyWriter, if (keys.isNullAt(i)) null else keys.get(i, keyType))
        writeNullable(entry, valueWriter, if (values.isNullAt(i)) null else values.get(i, valueType))
        entry.finish()
        val sum = low + entry.digestLow()
        high += entry.digestHigh() + (if (java.lang.Long.compareUnsigned(sum, low) < 0) 1L else 0L)
        low = sum
        i += 1
      }
      h.putInt(n)
      h.putLong(low)
      h.putLong(high)
    }
  }

  private final class StructWriter(s: Encoding.Struct, fieldWriters: IndexedSeq[ValueWriter]) extends ValueWriter {
    private val ordinals = s.fields.map(_.ordinal).toArray
    private val types = s.fields.map(_.encoding.sparkType).toArray
    private val writers = fieldWriters.toArray
    def write(h: Murmur3x64Stream, value: Any): Unit = {
      val row = value.asInstanceOf[InternalRow]
      var i = 0
      while (i < writers.length) {
        val o = ordinals(i)
        writeNullable(h, writers(i), if (row.isNullAt(o)) null else row.get(o, types(i)))
        i += 1
      }
    }
  }
}
