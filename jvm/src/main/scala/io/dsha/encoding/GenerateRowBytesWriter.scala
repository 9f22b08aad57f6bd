package io.dsha.encoding

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.{CodeAndComment, CodeFormatter, CodegenContext, CodeGenerator}

import io.dsha.hash.ByteSink
import io.dsha.types.CanonicalSchema
import io.dsha.types.CanonicalType._

/**
 * Generates the [[RowBytesWriter]] of one canonical row: straight-line Java, one block per column with its ordinal and
 * layout fixed, split into methods as Spark splits projections (so wide rows stay under the JIT's size limits), on the
 * algorithm's concrete sink class. Rows that are not UnsafeRows go to the [[InterpretedRowBytesWriter]] it holds.
 */
object GenerateRowBytesWriter {
  private val RowClass = classOf[UnsafeRow].getName

  def generate(spec: RowBytesWriter.Spec): RowBytesWriter = {
    val sinkClass = spec.algorithm.rowHasherClass.getName
    val ctx = new CodegenContext
    val fallback = ctx.addReferenceObj("fallback", new InterpretedRowBytesWriter(spec))
    val columns = spec.row.fields.map { f =>
      val o = spec.rowOrdinals(f.ordinal)
      s"""if (row.isNullAt($o)) {
         |  h.putByte(${Canonical.NULL_MARKER});
         |} else {
         |  ${value(ctx, spec, f, o)}
         |}""".stripMargin
    }
    val body = ctx.splitExpressions(columns, "writeColumns", Seq(sinkClass -> "h", RowClass -> "row"))
    val source =
      s"""public java.lang.Object generate(Object[] references) {
         |  return new SpecificRowBytesWriter(references);
         |}
         |
         |class SpecificRowBytesWriter extends ${classOf[RowBytesWriter].getName} {
         |  private Object[] references;
         |  ${ctx.declareMutableStates()}
         |
         |  public SpecificRowBytesWriter(Object[] references) {
         |    this.references = references;
         |    ${ctx.initMutableStates()}
         |  }
         |
         |  public void write(${classOf[ByteSink].getName} sink, org.apache.spark.sql.catalyst.InternalRow input) {
         |    if (input instanceof $RowClass && sink instanceof $sinkClass) {
         |      $sinkClass h = ($sinkClass) sink;
         |      $RowClass row = ($RowClass) input;
         |      $body
         |    } else {
         |      $fallback.write(sink, input);
         |    }
         |  }
         |
         |  ${ctx.declareAddedFunctions()}
         |}""".stripMargin
    val code = CodeFormatter.stripOverlappingComments(new CodeAndComment(source, ctx.getPlaceHolderToComments()))
    val (generated, _) = CodeGenerator.compile(code)
    generated.generate(ctx.references.toArray).asInstanceOf[RowBytesWriter]
  }

  /** The value marker and the canonical bytes of a non-null value in column `o`. */
  private def value(ctx: CodegenContext, spec: RowBytesWriter.Spec, f: Field, o: Int): String = {
    val m = Canonical.VALUE_MARKER
    f.dataType match {
      case Fixed(kind, _, _) => s"h.putByteAnd${kind.width.method}($m, ${kind.slotCode("row", o)});"
      case _: LengthPrefixed =>
        val offsetAndSize = ctx.freshName("offsetAndSize")
        val size = ctx.freshName("size")
        s"""long $offsetAndSize = row.getLong($o);
           |int $size = (int) $offsetAndSize;
           |h.putByteAndInt($m, $size);
           |h.putBytes(row.getBaseObject(), row.getBaseOffset() + ($offsetAndSize >>> 32), $size);""".stripMargin
      case other @ (_: Composite | _: Void | _: Variant | _: ArrayOf | _: MapOf | _: StructOf) =>
        // Composite and nested values (never on the plans HashRowBytes rewrites): the value object, interpreted.
        val writer = ctx.addReferenceObj(
          "writer",
          InterpretedValueWriter(other, CanonicalSchema.pathName(f.name), spec.algorithm),
          classOf[InterpretedValueWriter].getName
        )
        val dataType = ctx.addReferenceObj("type", other.sparkType, "org.apache.spark.sql.types.DataType")
        s"""h.putByte($m);
           |$writer.write(h, row.get($o, $dataType));""".stripMargin
    }
  }
}
