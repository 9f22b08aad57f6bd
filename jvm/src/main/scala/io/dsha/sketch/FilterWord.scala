package io.dsha.sketch

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{CodeGeneratorWithInterpretedFallback, UnsafeRow}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodeAndComment, CodeFormatter, CodegenContext, CodeGenerator}
import org.apache.spark.unsafe.types.UTF8String

import io.dsha.types.CanonicalType
import io.dsha.types.CanonicalType._

/**
 * A row's filter word (SPEC.md §17.2.1): a 32-bit word of its top-level values, read from fixed-width values and the
 * lengths of strings and binary, never from their bytes. Sketch cells sum it beside the row digest, so a decoded
 * difference names, with each differing digest, the filter word of its rows: the rows are then found by reading that
 * word from each row and hashing only the rows whose word is named.
 */
object FilterWord {
  val NullWord: Long = 0x6a09e667f3bcc908L
  private val Gamma = 0x9e3779b97f4a7c15L

  /** K_i, the odd multiplier of the i-th column in canonical order. */
  def multiplier(i: Int): Long = SketchCells.mix((i + 1) * Gamma) | 1L

  /** φ from the sum of K_i·v_i. */
  def finish(sum: Long): Long = SketchCells.mix(sum) >>> 32

  /** v of a non-null value object of canonical type `t`. */
  def valueWord(t: CanonicalType, v: Any): Long = t match {
    case Fixed(kind, _, _) => kind.bits(v)
    case LengthPrefixed(BytesKind.Utf8, _, _) => v.asInstanceOf[UTF8String].numBytes.toLong
    case LengthPrefixed(BytesKind.Bytes, _, _) => v.asInstanceOf[Array[Byte]].length.toLong
    case _: Composite | _: Void | _: Variant | _: ArrayOf | _: MapOf | _: StructOf => 1L
  }

  /** φ of a row of values: `value(f)` is the value of field `f` of `row` (canonical order), null when null. */
  def of(row: StructOf, value: Field => Any): Long = {
    var sum = 0L
    var i = 0
    while (i < row.fields.length) {
      val f = row.fields(i)
      val v = value(f)
      sum += multiplier(i) * (if (v == null) NullWord else valueWord(f.dataType, v))
      i += 1
    }
    finish(sum)
  }
}

/** Reads the filter word of rows whose columns `rowOrdinals` (per argument position) hold the canonical row `row`. */
abstract class FilterWordReader {
  def word(row: InternalRow): Long
}

final case class FilterWordSpec(row: StructOf, rowOrdinals: IndexedSeq[Int])

/**
 * Readers as Spark builds projections: generated code (reading an UnsafeRow's slots: no string or decimal object per
 * value) unless `spark.sql.codegen.factoryMode` says otherwise.
 */
object FilterWordReader extends CodeGeneratorWithInterpretedFallback[FilterWordSpec, FilterWordReader] {

  def apply(row: StructOf, rowOrdinals: IndexedSeq[Int]): FilterWordReader =
    createObject(FilterWordSpec(row, rowOrdinals))

  override protected def createCodeGeneratedObject(spec: FilterWordSpec): FilterWordReader = generate(spec)

  override protected def createInterpretedObject(spec: FilterWordSpec): FilterWordReader = new Interpreted(spec)

  /** Slots of an UnsafeRow read as such; value objects from any other row. */
  final class Interpreted(spec: FilterWordSpec) extends FilterWordReader {
    private val fields = spec.row.fields.toArray
    private val ordinals = fields.map(f => spec.rowOrdinals(f.ordinal))
    private val multipliers = fields.indices.map(FilterWord.multiplier).toArray // once, not per row

    override def word(row: InternalRow): Long = row match {
      case u: UnsafeRow =>
        var sum = 0L
        var i = 0
        while (i < fields.length) {
          val o = ordinals(i)
          val v =
            if (u.isNullAt(o)) FilterWord.NullWord
            else
              fields(i).dataType match {
                case Fixed(kind, _, _) => kind.slotBits(u, o)
                case _: LengthPrefixed => u.getLong(o).toInt.toLong // the slot's low half: the size in bytes
                case other => FilterWord.valueWord(other, u.get(o, other.sparkType))
              }
          sum += multipliers(i) * v
          i += 1
        }
        FilterWord.finish(sum)
      case other =>
        FilterWord.of(spec.row, f => other.get(spec.rowOrdinals(f.ordinal), f.dataType.sparkType))
    }
  }

  private val RowClass = classOf[UnsafeRow].getName

  private def generate(spec: FilterWordSpec): FilterWordReader = {
    val ctx = new CodegenContext
    val fallback = ctx.addReferenceObj("fallback", new Interpreted(spec))
    val terms = spec.row.fields.zipWithIndex.map { case (f, i) =>
      val o = spec.rowOrdinals(f.ordinal)
      val v = f.dataType match {
        case Fixed(kind, _, _) => s"(long) ${kind.slotCode("row", o)}"
        case _: LengthPrefixed => s"(long) (int) row.getLong($o)"
        case _ => "1L" // a non-null value of any other type (no direct reader: never on flat rows)
      }
      s"sum += ${FilterWord.multiplier(i)}L * (row.isNullAt($o) ? ${FilterWord.NullWord}L : $v);"
    }
    // Inline when short; split, each function sums its columns and the calls are added.
    val body = ctx.splitExpressions(
      terms,
      "addWords",
      Seq(RowClass -> "row"),
      "long",
      makeSplitFunction = code => s"long sum = 0L;\n$code\nreturn sum;",
      foldFunctions = calls => calls.map(c => s"sum += $c;").mkString("\n")
    )
    val source =
      s"""public java.lang.Object generate(Object[] references) {
         |  return new SpecificFilterWordReader(references);
         |}
         |
         |class SpecificFilterWordReader extends ${classOf[FilterWordReader].getName} {
         |  private Object[] references;
         |  ${ctx.declareMutableStates()}
         |
         |  public SpecificFilterWordReader(Object[] references) {
         |    this.references = references;
         |    ${ctx.initMutableStates()}
         |  }
         |
         |  public long word(org.apache.spark.sql.catalyst.InternalRow input) {
         |    if (!(input instanceof $RowClass)) return $fallback.word(input);
         |    $RowClass row = ($RowClass) input;
         |    long sum = 0L;
         |    $body
         |    return ${classOf[SketchCells].getName}.mix(sum) >>> 32;
         |  }
         |
         |  ${ctx.declareAddedFunctions()}
         |}""".stripMargin
    val code = CodeFormatter.stripOverlappingComments(new CodeAndComment(source, ctx.getPlaceHolderToComments()))
    val (generated, _) = CodeGenerator.compile(code)
    generated.generate(ctx.references.toArray).asInstanceOf[FilterWordReader]
  }
}
