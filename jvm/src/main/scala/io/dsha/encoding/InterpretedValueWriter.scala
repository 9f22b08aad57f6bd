package io.dsha.encoding

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.util.{ArrayData, MapData}
import org.apache.spark.sql.types.DataType

import io.dsha.algorithm.{Algorithm, EntrySet}
import io.dsha.hash.ByteSink
import io.dsha.shims.SparkShims
import io.dsha.types.CanonicalType
import io.dsha.types.CanonicalType._

/**
 * Writes the canonical encoding of a non-null value object into a byte sink: the interpreted twin of
 * [[GenerateValueWriter]], derived from the same table ([[CanonicalType]]). Built once per task; map and variant writers
 * own the entry sets their values need.
 */
abstract class InterpretedValueWriter {
  def write(h: ByteSink, value: Any): Unit
}

object InterpretedValueWriter {

  def apply(t: CanonicalType, path: String, algorithm: Algorithm): InterpretedValueWriter = t match {
    case Fixed(kind, _, _) => (h, v) => kind.width.put(h, kind.bits(v))
    case LengthPrefixed(kind, _, _) => (h, v) => kind.write(h, v)
    case Composite(kind, _, _) => (h, v) => kind.write(h, v)
    case Void(_) => (_, _) => ()
    case Variant(_) =>
      val encoder = VariantEncoders.create(path, algorithm)
      (h, v) => encoder.write(h, v)
    case a: ArrayOf => new ArrayWriter(a, InterpretedValueWriter(a.element, path + "[]", algorithm))
    case m: MapOf =>
      new MapWriter(
        m,
        InterpretedValueWriter(m.key, path + ".key", algorithm),
        InterpretedValueWriter(m.value, path + ".value", algorithm),
        algorithm.newEntrySet()
      )
    case s: StructOf =>
      new StructWriter(s, s.fields.map(f => InterpretedValueWriter(f.dataType, s"$path.${f.name}", algorithm)))
  }

  /** Marker byte, then the value when present: the layout of every column, element, entry part and field. */
  def writeNullable(h: ByteSink, w: InterpretedValueWriter, value: Any): Unit =
    if (value == null) h.putByte(Canonical.NULL_MARKER)
    else {
      h.putByte(Canonical.VALUE_MARKER)
      w.write(h, value)
    }

  private final class ArrayWriter(a: ArrayOf, elementWriter: InterpretedValueWriter) extends InterpretedValueWriter {
    private val elementType: DataType = a.element.sparkType
    def write(h: ByteSink, value: Any): Unit = {
      val array = value.asInstanceOf[ArrayData]
      val n = array.numElements()
      h.putInt(n)
      var i = 0
      while (i < n) {
        writeNullable(h, elementWriter, if (array.isNullAt(i)) null else array.get(i, elementType))
        i += 1
      }
    }
  }

  private final class MapWriter(
      m: MapOf,
      keyWriter: InterpretedValueWriter,
      valueWriter: InterpretedValueWriter,
      entries: EntrySet
  ) extends InterpretedValueWriter {
    private val keyType = m.key.sparkType
    private val valueType = m.value.sparkType
    def write(h: ByteSink, value: Any): Unit = {
      val map = value.asInstanceOf[MapData]
      val keys = map.keyArray()
      val values = map.valueArray()
      val n = map.numElements()
      entries.clear()
      var i = 0
      while (i < n) {
        val entry = entries.begin()
        writeNullable(entry, keyWriter, if (keys.isNullAt(i)) null else keys.get(i, keyType))
        writeNullable(entry, valueWriter, if (values.isNullAt(i)) null else values.get(i, valueType))
        entries.end()
        i += 1
      }
      entries.writeTo(h, n)
    }
  }

  private final class StructWriter(s: StructOf, fieldWriters: IndexedSeq[InterpretedValueWriter])
      extends InterpretedValueWriter {
    private val ordinals = s.fields.map(_.ordinal).toArray
    private val types = s.fields.map(_.dataType.sparkType).toArray
    private val writers = fieldWriters.toArray
    def write(h: ByteSink, value: Any): Unit = {
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

/** Variant encoders of a column, reading the Spark line's variants through its shim (also called by generated code). */
object VariantEncoders {
  def create(path: String, algorithm: Algorithm): VariantEncoder =
    new VariantEncoder(path, algorithm.description, SparkShims.variantAccess, () => algorithm.newEntrySet())
}
