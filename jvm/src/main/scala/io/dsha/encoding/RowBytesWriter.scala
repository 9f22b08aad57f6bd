package io.dsha.encoding

import scala.annotation.switch

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types.DataType

import io.dsha.encoding.Encoding.Kind
import io.dsha.hash.Murmur3x64Stream

/**
 * Writes the canonical encoding of a row's columns (marker, then value, in canonical order) into a hash stream, reading
 * an `UnsafeRow` straight from its bytes: no `UTF8String` or `Decimal` object per value, which is most of what the
 * generated code spends on flat tables. Other rows, and columns without a direct reader, go through [[ValueWriter]], so
 * the bytes are the same as [[io.dsha.expressions.LogicalHash]] writes.
 *
 * @param encoding     the canonical encoding of the arguments (fields carry argument positions)
 * @param rowOrdinals  for each argument position, the column of the input row that holds it
 */
final class RowBytesWriter(encoding: Encoding.Struct, rowOrdinals: IndexedSeq[Int]) {
  import RowBytesWriter._

  private val fields = encoding.fields
  private val ordinals: Array[Int] = fields.map(f => rowOrdinals(f.ordinal)).toArray
  private val readers: Array[Int] = fields.map(f => readerOf(f.encoding)).toArray
  private val types: Array[DataType] = fields.map(_.encoding.sparkType).toArray
  private val writers: Array[ValueWriter] =
    fields.map(f => ValueWriter(f.encoding, Encoding.pathName(f.name))).toArray

  /** Whether every column is read from the row's bytes (no per-value objects at all). */
  def direct: Boolean = readers.forall(_ != Generic)

  def write(h: Murmur3x64Stream, row: InternalRow): Unit = row match {
    case u: UnsafeRow => writeUnsafe(h, u)
    case other => writeGeneric(h, other)
  }

  private def writeUnsafe(h: Murmur3x64Stream, row: UnsafeRow): Unit = {
    val m = Canonical.VALUE_MARKER
    var i = 0
    while (i < ordinals.length) {
      val o = ordinals(i)
      if (row.isNullAt(o)) {
        h.putByte(Canonical.NULL_MARKER)
      } else {
        (readers(i): @switch) match {
          case Bool => h.putByteAndByte(m, if (row.getBoolean(o)) 1 else 0)
          case Int8 => h.putByteAndByte(m, row.getByte(o))
          case Int16 => h.putByteAndShort(m, row.getShort(o))
          case Int32 => h.putByteAndInt(m, row.getInt(o))
          case Int64 => h.putByteAndLong(m, row.getLong(o))
          case Float32 => h.putByteAndInt(m, Canonical.floatBits(row.getFloat(o)))
          case Float64 => h.putByteAndLong(m, Canonical.doubleBits(row.getDouble(o)))
          case LengthPrefixed =>
            // Variable-length values: offset from the row's start in the high word, size in the low word.
            val offsetAndSize = row.getLong(o)
            val size = offsetAndSize.toInt
            h.putByteAndInt(m, size)
            h.putBytes(row.getBaseObject, row.getBaseOffset + (offsetAndSize >>> 32), size)
          case _ =>
            h.putByte(m)
            writers(i).write(h, row.get(o, types(i)))
        }
      }
      i += 1
    }
  }

  private def writeGeneric(h: Murmur3x64Stream, row: InternalRow): Unit = {
    var i = 0
    while (i < ordinals.length) {
      val o = ordinals(i)
      if (row.isNullAt(o)) {
        h.putByte(Canonical.NULL_MARKER)
      } else {
        h.putByte(Canonical.VALUE_MARKER)
        writers(i).write(h, row.get(o, types(i)))
      }
      i += 1
    }
  }
}

object RowBytesWriter {
  private final val Generic = 0
  private final val Bool = 1
  private final val Int8 = 2
  private final val Int16 = 3
  private final val Int32 = 4
  private final val Int64 = 5
  private final val Float32 = 6
  private final val Float64 = 7
  private final val LengthPrefixed = 8

  /**
   * How a non-null value sits in an UnsafeRow, where its canonical bytes can be read directly: fixed-width values in
   * their 8-byte slot (decimals of precision <= 18 as their unscaled long, at the type's scale), strings and binary as
   * bytes elsewhere in the row, whose canonical form is u32 length + bytes.
   */
  private def readerOf(e: Encoding): Int = e match {
    case Encoding.Leaf(Kind.Bool, _, _) => Bool
    case Encoding.Leaf(Kind.Int8, _, _) => Int8
    case Encoding.Leaf(Kind.Int16, _, _) => Int16
    case Encoding.Leaf(Kind.Int32, _, _) => Int32
    case Encoding.Leaf(Kind.Int64, _, _) => Int64
    case Encoding.Leaf(Kind.Float32, _, _) => Float32
    case Encoding.Leaf(Kind.Float64, _, _) => Float64
    case Encoding.Leaf(Kind.Utf8 | Kind.Bytes, _, _) => LengthPrefixed
    case d: Encoding.Decimal if !d.wide => Int64
    case _ => Generic
  }
}
