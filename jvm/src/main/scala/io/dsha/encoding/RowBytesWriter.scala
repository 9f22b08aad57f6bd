package io.dsha.encoding

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.CodeGeneratorWithInterpretedFallback

import io.dsha.algorithm.Algorithm
import io.dsha.hash.ByteSink
import io.dsha.types.CanonicalType
import io.dsha.types.CanonicalType._

/**
 * Writes the canonical encoding of a row's columns (marker, then value, in canonical order) into a byte sink, reading
 * an `UnsafeRow` straight from its bytes: no `UTF8String` or `Decimal` object per value, which is most of what Spark's
 * generated aggregate spends on flat tables. The bytes are the ones [[io.dsha.expressions.LogicalHash]] writes.
 */
abstract class RowBytesWriter {
  def write(h: ByteSink, row: InternalRow): Unit
}

/**
 * What a row-bytes writer writes.
 *
 * @param row         the canonical row type of the arguments (fields carry argument positions)
 * @param rowOrdinals for each argument position, the column of the input row that holds it
 * @param algorithm   whose sink the writer writes into (generated code names its class)
 */
final case class RowBytesSpec(row: StructOf, rowOrdinals: IndexedSeq[Int], algorithm: Algorithm)

/**
 * Builds writers as Spark builds projections: generated code unless `spark.sql.codegen.factoryMode` says otherwise
 * (NO_CODEGEN: [[InterpretedRowBytesWriter]]; FALLBACK: that one too if compiling fails).
 */
object RowBytesWriter extends CodeGeneratorWithInterpretedFallback[RowBytesSpec, RowBytesWriter] {
  type Spec = RowBytesSpec

  def apply(row: StructOf, rowOrdinals: IndexedSeq[Int], algorithm: Algorithm): RowBytesWriter =
    createObject(RowBytesSpec(row, rowOrdinals, algorithm))

  override protected def createCodeGeneratedObject(spec: Spec): RowBytesWriter = GenerateRowBytesWriter.generate(spec)

  override protected def createInterpretedObject(spec: Spec): RowBytesWriter = new InterpretedRowBytesWriter(spec)

  /**
   * Whether a non-null value of this type is read straight from an UnsafeRow: fixed-width values from their 8-byte
   * slot, strings and binary from the offset and size in theirs. Everything else is read as a value object.
   */
  def readsBytes(t: CanonicalType): Boolean = t match {
    case _: Fixed | _: LengthPrefixed => true
    case _: Composite | _: Void | _: Variant | _: ArrayOf | _: MapOf | _: StructOf => false
  }

  /** Whether every column is read from the row's bytes (no per-value objects at all). */
  def direct(row: StructOf): Boolean = row.fields.forall(f => readsBytes(f.dataType))
}
