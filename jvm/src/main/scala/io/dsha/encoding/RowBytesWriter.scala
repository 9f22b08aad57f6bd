package io.dsha.encoding

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.CodeGeneratorWithInterpretedFallback

import io.dsha.encoding.Encoding.Kind
import io.dsha.hash.Murmur3x64Stream

/**
 * Writes the canonical encoding of a row's columns (marker, then value, in canonical order) into a hash stream, reading
 * an `UnsafeRow` straight from its bytes: no `UTF8String` or `Decimal` object per value, which is most of what Spark's
 * generated aggregate spends on flat tables. The bytes are the ones [[io.dsha.expressions.LogicalHash]] writes.
 */
abstract class RowBytesWriter {
  def write(h: Murmur3x64Stream, row: InternalRow): Unit
}

/**
 * Builds writers as Spark builds projections: generated code unless `spark.sql.codegen.factoryMode` says otherwise
 * (NO_CODEGEN: [[InterpretedRowBytesWriter]]; FALLBACK: that one too if compiling fails).
 */
object RowBytesWriter
    extends CodeGeneratorWithInterpretedFallback[(Encoding.Struct, IndexedSeq[Int]), RowBytesWriter] {

  /**
   * @param encoding    the canonical encoding of the arguments (fields carry argument positions)
   * @param rowOrdinals for each argument position, the column of the input row that holds it
   */
  def apply(encoding: Encoding.Struct, rowOrdinals: IndexedSeq[Int]): RowBytesWriter =
    createObject((encoding, rowOrdinals))

  override protected def createCodeGeneratedObject(in: (Encoding.Struct, IndexedSeq[Int])): RowBytesWriter =
    GenerateRowBytesWriter.generate(in._1, in._2)

  override protected def createInterpretedObject(in: (Encoding.Struct, IndexedSeq[Int])): RowBytesWriter =
    new InterpretedRowBytesWriter(in._1, in._2)

  /** How a non-null value of an encoding is read from an UnsafeRow, when its canonical bytes can be read directly. */
  sealed trait Reader
  object Reader {
    // A fixed-width value in its 8-byte slot, canonical as `kind`; decimals of precision <= 18 are their unscaled long
    // at the type's scale, so Int64.
    final case class Slot(kind: Kind) extends Reader
    // Strings and binary: offset and size in the slot, bytes elsewhere in the row; canonical form u32 length + bytes.
    case object LengthPrefixed extends Reader
    // Everything else: the value object, written by ValueWriter.
    case object Generic extends Reader
  }

  private val SlotKinds: Set[Kind] =
    Set(Kind.Bool, Kind.Int8, Kind.Int16, Kind.Int32, Kind.Int64, Kind.Float32, Kind.Float64)

  def readerOf(e: Encoding): Reader = e match {
    case Encoding.Leaf(kind, _, _) if SlotKinds(kind) => Reader.Slot(kind)
    case Encoding.Leaf(Kind.Utf8 | Kind.Bytes, _, _) => Reader.LengthPrefixed
    case d: Encoding.Decimal if !d.wide => Reader.Slot(Kind.Int64)
    case _ => Reader.Generic
  }

  /** Whether every column is read from the row's bytes (no per-value objects at all). */
  def direct(encoding: Encoding.Struct): Boolean = encoding.fields.forall(f => readerOf(f.encoding) != Reader.Generic)
}
