package io.dsha.encoding

import scala.annotation.switch

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
  import InterpretedRowBytesWriter._

  private val fields = encoding.fields
  private val ordinals: Array[Int] = fields.map(f => rowOrdinals(f.ordinal)).toArray
  private val readers: Array[Int] = fields.map(f => code(RowBytesWriter.readerOf(f.encoding))).toArray
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
      if (row.isNullAt(o)) {
        h.putByte(Canonical.NULL_MARKER)
      } else if (unsafe != null && readers(i) != Generic) {
        writeDirect(h, unsafe, o, readers(i))
      } else {
        h.putByte(Canonical.VALUE_MARKER)
        writers(i).write(h, row.get(o, types(i)))
      }
      i += 1
    }
  }

  private def writeDirect(h: Murmur3x64Stream, row: UnsafeRow, o: Int, reader: Int): Unit = {
    val m = Canonical.VALUE_MARKER
    (reader: @switch) match {
      case Bool => h.putByteAndByte(m, if (row.getBoolean(o)) 1 else 0)
      case Int8 => h.putByteAndByte(m, row.getByte(o))
      case Int16 => h.putByteAndShort(m, row.getShort(o))
      case Int32 => h.putByteAndInt(m, row.getInt(o))
      case Int64 => h.putByteAndLong(m, row.getLong(o))
      case Float32 => h.putByteAndInt(m, Canonical.floatBits(row.getFloat(o)))
      case Float64 => h.putByteAndLong(m, Canonical.doubleBits(row.getDouble(o)))
      case LengthPrefixed =>
        // Offset from the row's start in the high word, size in the low word.
        val offsetAndSize = row.getLong(o)
        val size = offsetAndSize.toInt
        h.putByteAndInt(m, size)
        h.putBytes(row.getBaseObject, row.getBaseOffset + (offsetAndSize >>> 32), size)
    }
  }
}

object InterpretedRowBytesWriter {
  private final val Generic = 0
  private final val Bool = 1
  private final val Int8 = 2
  private final val Int16 = 3
  private final val Int32 = 4
  private final val Int64 = 5
  private final val Float32 = 6
  private final val Float64 = 7
  private final val LengthPrefixed = 8

  private def code(reader: Reader): Int = reader match {
    case Reader.Slot(_, Kind.Bool) => Bool
    case Reader.Slot(_, Kind.Int8) => Int8
    case Reader.Slot(_, Kind.Int16) => Int16
    case Reader.Slot(_, Kind.Int32) => Int32
    case Reader.Slot(_, Kind.Int64) => Int64
    case Reader.Slot(_, Kind.Float32) => Float32
    case Reader.Slot(_, Kind.Float64) => Float64
    case Reader.LengthPrefixed => LengthPrefixed
    case _ => Generic
  }
}
