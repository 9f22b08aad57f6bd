package io.dsha.types

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.types.{DataType, Decimal}
import org.apache.spark.unsafe.types.{CalendarInterval, UTF8String}

import io.dsha.encoding.Canonical
import io.dsha.hash.ByteSink

/**
 * The one table of types (SPEC.md §2.3, §3): for each canonical type, its name and how a non-null value is laid out
 * and read — from a value object (`InternalRow.get`), in generated Java, and from an `UnsafeRow`'s bytes. Every
 * writer (interpreted, generated, row bytes) matches on this sealed family and nothing else, so a new type is one
 * entry here plus its mapping in [[CanonicalSchema]]; the compiler checks that every writer handles every layout.
 *
 * `sparkType` is the physical type the value is read as (for UDTs their SQL type, for CHAR/VARCHAR StringType).
 */
sealed trait CanonicalType extends Serializable {
  def name: String
  def sparkType: DataType
}

object CanonicalType {
  private val C = classOf[Canonical].getName

  /** A value of 1, 2, 4 or 8 canonical bytes: the widths the sinks write (and fuse with a marker) in one call. */
  final case class Fixed(kind: FixedKind, name: String, sparkType: DataType) extends CanonicalType

  /** A u32 length, then bytes: strings (UTF-8 as stored) and binary. */
  final case class LengthPrefixed(kind: BytesKind, name: String, sparkType: DataType) extends CanonicalType

  /** A leaf of composite or wide layout, written by one [[Canonical]] helper. */
  final case class Composite(kind: CompositeKind, name: String, sparkType: DataType) extends CanonicalType

  /** VOID: never present. */
  final case class Void(sparkType: DataType) extends CanonicalType { def name: String = "void" }

  /** VARIANT: a tagged logical value (io.dsha.encoding.VariantEncoder). */
  final case class Variant(sparkType: DataType) extends CanonicalType { def name: String = "variant" }

  final case class ArrayOf(element: CanonicalType, sparkType: DataType) extends CanonicalType {
    def name: String = s"array<${element.name}>"
  }

  /** Entries are an order-independent set (the algorithm's EntrySet). */
  final case class MapOf(key: CanonicalType, value: CanonicalType, sparkType: DataType) extends CanonicalType {
    def name: String = s"map<${key.name},${value.name}>"
  }

  /** A struct or a row: `fields` in canonical order (by the UTF-8 bytes of their names). */
  final case class StructOf(fields: IndexedSeq[Field], sparkType: DataType) extends CanonicalType {
    def name: String =
      fields.map(f => s"${CanonicalSchema.quoteName(f.name)}:${f.dataType.name}").mkString("struct<", ",", ">")
  }

  /** `ordinal` is the field's position in the Spark struct (or the argument list), not in canonical order. */
  final case class Field(name: String, ordinal: Int, dataType: CanonicalType)

  /** Byte widths of fixed-width values, as the sink methods name them (`put<Width>`, `putByteAnd<Width>`). */
  sealed abstract class Width(val method: String) extends Serializable {
    def put(h: ByteSink, bits: Long): Unit
    def putMarked(h: ByteSink, marker: Int, bits: Long): Unit
  }
  object Width {
    case object Byte extends Width("Byte") {
      def put(h: ByteSink, bits: Long): Unit = h.putByte(bits.toInt)
      def putMarked(h: ByteSink, m: Int, bits: Long): Unit = h.putByteAndByte(m, bits.toInt)
    }
    case object Short extends Width("Short") {
      def put(h: ByteSink, bits: Long): Unit = h.putShort(bits.toShort)
      def putMarked(h: ByteSink, m: Int, bits: Long): Unit = h.putByteAndShort(m, bits.toShort)
    }
    case object Int extends Width("Int") {
      def put(h: ByteSink, bits: Long): Unit = h.putInt(bits.toInt)
      def putMarked(h: ByteSink, m: Int, bits: Long): Unit = h.putByteAndInt(m, bits.toInt)
    }
    case object Long extends Width("Long") {
      def put(h: ByteSink, bits: Long): Unit = h.putLong(bits)
      def putMarked(h: ByteSink, m: Int, bits: Long): Unit = h.putByteAndLong(m, bits)
    }
  }

  /**
   * A fixed-width layout: the canonical bits of a value, read four ways — from its value object (`bits`), from its
   * Java value in generated code (`bitsCode`, an expression of the width's Java type), and from an UnsafeRow slot,
   * interpreted (`slotBits`) and generated (`slotCode`).
   */
  sealed abstract class FixedKind(val width: Width) extends Serializable {
    def bits(v: Any): Long
    def bitsCode(v: String): String
    def slotBits(row: UnsafeRow, o: Int): Long
    def slotCode(row: String, o: Int): String
  }
  object FixedKind {

    /** 1 byte: 0 or 1. */
    case object Bool extends FixedKind(Width.Byte) {
      def bits(v: Any): Long = if (v.asInstanceOf[Boolean]) 1 else 0
      def bitsCode(v: String): String = s"($v ? 1 : 0)"
      def slotBits(row: UnsafeRow, o: Int): Long = if (row.getBoolean(o)) 1 else 0
      def slotCode(row: String, o: Int): String = bitsCode(s"$row.getBoolean($o)")
    }
    case object Int8 extends FixedKind(Width.Byte) {
      def bits(v: Any): Long = v.asInstanceOf[Byte]
      def bitsCode(v: String): String = v
      def slotBits(row: UnsafeRow, o: Int): Long = row.getByte(o)
      def slotCode(row: String, o: Int): String = s"$row.getByte($o)"
    }
    case object Int16 extends FixedKind(Width.Short) {
      def bits(v: Any): Long = v.asInstanceOf[Short]
      def bitsCode(v: String): String = v
      def slotBits(row: UnsafeRow, o: Int): Long = row.getShort(o)
      def slotCode(row: String, o: Int): String = s"$row.getShort($o)"
    }
    case object Int32 extends FixedKind(Width.Int) {
      def bits(v: Any): Long = v.asInstanceOf[Int]
      def bitsCode(v: String): String = v
      def slotBits(row: UnsafeRow, o: Int): Long = row.getInt(o)
      def slotCode(row: String, o: Int): String = s"$row.getInt($o)"
    }
    case object Int64 extends FixedKind(Width.Long) {
      def bits(v: Any): Long = v.asInstanceOf[Long]
      def bitsCode(v: String): String = v
      def slotBits(row: UnsafeRow, o: Int): Long = row.getLong(o)
      def slotCode(row: String, o: Int): String = s"$row.getLong($o)"
    }

    /** Normalised IEEE-754 bits (SPEC.md §3.2). */
    case object Float32 extends FixedKind(Width.Int) {
      def bits(v: Any): Long = Canonical.floatBits(v.asInstanceOf[Float])
      def bitsCode(v: String): String = s"$C.floatBits($v)"
      def slotBits(row: UnsafeRow, o: Int): Long = Canonical.floatBits(row.getFloat(o))
      def slotCode(row: String, o: Int): String = bitsCode(s"$row.getFloat($o)")
    }
    case object Float64 extends FixedKind(Width.Long) {
      def bits(v: Any): Long = Canonical.doubleBits(v.asInstanceOf[Double])
      def bitsCode(v: String): String = s"$C.doubleBits($v)"
      def slotBits(row: UnsafeRow, o: Int): Long = Canonical.doubleBits(row.getDouble(o))
      def slotCode(row: String, o: Int): String = bitsCode(s"$row.getDouble($o)")
    }

    /** decimal(p, s), p <= 18: the unscaled value at scale s; an UnsafeRow keeps exactly that long in the slot. */
    final case class Decimal64(scale: Int) extends FixedKind(Width.Long) {
      def bits(v: Any): Long = Canonical.unscaledLong(v.asInstanceOf[Decimal], scale)
      def bitsCode(v: String): String = s"$C.unscaledLong($v, $scale)"
      def slotBits(row: UnsafeRow, o: Int): Long = row.getLong(o)
      def slotCode(row: String, o: Int): String = s"$row.getLong($o)"
    }
  }

  /**
   * Length-prefixed values. In an UnsafeRow both kinds keep their offset and size in the slot and their bytes in the
   * variable-length section, which the row-bytes writers read alike.
   */
  sealed abstract class BytesKind extends Serializable {
    def write(h: ByteSink, v: Any): Unit
    def writeCode(h: String, v: String): String
  }
  object BytesKind {
    case object Utf8 extends BytesKind {
      def write(h: ByteSink, v: Any): Unit = Canonical.putString(h, v.asInstanceOf[UTF8String])
      def writeCode(h: String, v: String): String = s"$C.putString($h, $v);"
    }
    case object Bytes extends BytesKind {
      def write(h: ByteSink, v: Any): Unit = Canonical.putBinary(h, v.asInstanceOf[Array[Byte]])
      def writeCode(h: String, v: String): String = s"$C.putBinary($h, $v);"
    }
  }

  /** Leaves written by one Canonical helper each; no direct reader from row bytes. */
  sealed abstract class CompositeKind extends Serializable {
    def write(h: ByteSink, v: Any): Unit
    def writeCode(h: String, v: String): String
  }
  object CompositeKind {

    /** decimal(p, s), p > 18: the unscaled value as i128, low word first. */
    final case class Decimal128(scale: Int) extends CompositeKind {
      def write(h: ByteSink, v: Any): Unit = Canonical.putDecimal128(h, v.asInstanceOf[Decimal], scale)
      def writeCode(h: String, v: String): String = s"$C.putDecimal128($h, $v, $scale);"
    }

    /** months i32, days i32, microseconds i64. */
    case object Interval extends CompositeKind {
      def write(h: ByteSink, v: Any): Unit = Canonical.putInterval(h, v.asInstanceOf[CalendarInterval])
      def writeCode(h: String, v: String): String = s"$C.putInterval($h, $v);"
    }

    /** Microseconds i64, then nanoseconds within the microsecond i16. */
    case object TimestampNanos extends CompositeKind {
      def write(h: ByteSink, v: Any): Unit = Canonical.putTimestampNanos(h, v)
      def writeCode(h: String, v: String): String = s"$C.putTimestampNanos($h, $v);"
    }
  }
}
