package io.dsha.encoding

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types.DataType

import io.dsha.encoding.Encoding.Kind
import io.dsha.encoding.RowBytesWriter.Reader
import io.dsha.hash.Murmur3x64Stream

/**
 * The interpreted [[RowBytesWriter]], and the generated one's fallback for rows that are not UnsafeRows: those, and
 * columns without a direct reader, go through [[ValueWriter]].
 */
final class InterpretedRowBytesWriter(encoding: Encoding.Struct, rowOrdinals: IndexedSeq[Int])
    extends RowBytesWriter {

  private val fields = encoding.fields
  private val ordinals: Array[Int] = fields.map(f => rowOrdinals(f.ordinal)).toArray
  private val readers: Array[Reader] = fields.map(f => RowBytesWriter.readerOf(f.encoding)).toArray
  private val types: Array[DataType] = fields.map(_.encoding.sparkType).toArray
  private val writers: Array[ValueWriter] =
    fields.map(f => ValueWriter(f.encoding, Encoding.pathName(f.name))).toArray

  def write(h: Murmur3x64Stream, row: InternalRow): Unit = {
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
  private def writeFromBytes(h: Murmur3x64Stream, row: UnsafeRow, i: Int, o: Int): Unit = {
    val m = Canonical.VALUE_MARKER
    readers(i) match {
      case Reader.Slot(Kind.Bool) => h.putByteAndByte(m, if (row.getBoolean(o)) 1 else 0)
      case Reader.Slot(Kind.Int8) => h.putByteAndByte(m, row.getByte(o))
      case Reader.Slot(Kind.Int16) => h.putByteAndShort(m, row.getShort(o))
      case Reader.Slot(Kind.Int32) => h.putByteAndInt(m, row.getInt(o))
      case Reader.Slot(Kind.Float32) => h.putByteAndInt(m, Canonical.floatBits(row.getFloat(o)))
      case Reader.Slot(Kind.Float64) => h.putByteAndLong(m, Canonical.doubleBits(row.getDouble(o)))
      case Reader.Slot(_) => h.putByteAndLong(m, row.getLong(o))
      case Reader.LengthPrefixed =>
        // Offset from the row's start in the high word, size in the low word.
        val offsetAndSize = row.getLong(o)
        val size = offsetAndSize.toInt
        h.putByteAndInt(m, size)
        h.putBytes(row.getBaseObject, row.getBaseOffset + (offsetAndSize >>> 32), size)
      case Reader.Generic => writeObject(h, row, i, o)
    }
  }

  /** The value marker and argument `i`'s value object, from column `o`, written by its ValueWriter. */
  private def writeObject(h: Murmur3x64Stream, row: InternalRow, i: Int, o: Int): Unit = {
    h.putByte(Canonical.VALUE_MARKER)
    writers(i).write(h, row.get(o, types(i)))
  }
}
