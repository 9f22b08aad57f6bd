package io.dsha.encoding

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types.DataType

import io.dsha.hash.ByteSink
import io.dsha.types.CanonicalSchema
import io.dsha.types.CanonicalType
import io.dsha.types.CanonicalType._

/**
 * The interpreted [[RowBytesWriter]], and the generated one's fallback for rows that are not UnsafeRows: those, and
 * columns without a direct reader, go through [[InterpretedValueWriter]].
 */
final class InterpretedRowBytesWriter(spec: RowBytesWriter.Spec) extends RowBytesWriter {

  private val fields = spec.row.fields
  private val ordinals: Array[Int] = fields.map(f => spec.rowOrdinals(f.ordinal)).toArray
  private val canonicalTypes: Array[CanonicalType] = fields.map(_.dataType).toArray
  private val types: Array[DataType] = fields.map(_.dataType.sparkType).toArray
  private val writers: Array[InterpretedValueWriter] =
    fields.map(f => InterpretedValueWriter(f.dataType, CanonicalSchema.pathName(f.name), spec.algorithm)).toArray

  def write(h: ByteSink, row: InternalRow): Unit = {
    val unsafe = row match {
      case u: UnsafeRow => u
      case _ => null
    }
    var i = 0
    while (i < ordinals.length) {
      val o = ordinals(i)
      if (row.isNullAt(o)) h.putByte(Canonical.NULL_MARKER)
      else if (unsafe != null) writeFromBytes(h, unsafe, i, o)
      else writeObject(h, row, i, o)
      i += 1
    }
  }

  /** The value marker and the canonical bytes of argument `i`, read from column `o`'s bytes when it has a reader. */
  private def writeFromBytes(h: ByteSink, row: UnsafeRow, i: Int, o: Int): Unit = canonicalTypes(i) match {
    case Fixed(kind, _, _) => kind.width.putMarked(h, Canonical.VALUE_MARKER, kind.slotBits(row, o))
    case _: LengthPrefixed =>
      // Offset from the row's start in the high word, size in the low word.
      val offsetAndSize = row.getLong(o)
      val size = offsetAndSize.toInt
      h.putByteAndInt(Canonical.VALUE_MARKER, size)
      h.putBytes(row.getBaseObject, row.getBaseOffset + (offsetAndSize >>> 32), size)
    case _: Composite | _: Void | _: Variant | _: ArrayOf | _: MapOf | _: StructOf => writeObject(h, row, i, o)
  }

  /** The value marker and argument `i`'s value object, from column `o`, written by its value writer. */
  private def writeObject(h: ByteSink, row: InternalRow, i: Int, o: Int): Unit = {
    h.putByte(Canonical.VALUE_MARKER)
    writers(i).write(h, row.get(o, types(i)))
  }
}
