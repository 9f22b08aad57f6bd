package io.dsha.encoding

import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.catalyst.expressions.codegen.{CodeAndComment, CodeFormatter, CodegenContext, CodeGenerator}

import io.dsha.encoding.Encoding.Kind
import io.dsha.encoding.RowBytesWriter.Reader
import io.dsha.hash.Murmur3x64Stream

/**
 * Generates the [[RowBytesWriter]] of one canonical encoding: straight-line Java, one block per column with its ordinal
 * and reader fixed, split into methods as Spark splits projections (so wide rows stay under the JIT's size limits).
 * Rows that are not UnsafeRows go to the [[InterpretedRowBytesWriter]] the generated class holds.
 */
object GenerateRowBytesWriter {
  private val StreamClass = classOf[Murmur3x64Stream].getName
  private val RowClass = classOf[UnsafeRow].getName
  private val CanonicalClass = classOf[Canonical].getName

  def generate(encoding: Encoding.Struct, rowOrdinals: IndexedSeq[Int]): RowBytesWriter = {
    val ctx = new CodegenContext
    val fallback = ctx.addReferenceObj("fallback", new InterpretedRowBytesWriter(encoding, rowOrdinals))
    val columns = encoding.fields.map { f =>
      val o = rowOrdinals(f.ordinal)
      s"""if (row.isNullAt($o)) {
         |  h.putByte(${Canonical.NULL_MARKER});
         |} else {
         |  ${value(ctx, f, o)}
         |}""".stripMargin
    }
    val body = ctx.splitExpressions(columns, "writeColumns", Seq(StreamClass -> "h", RowClass -> "row"))
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
         |  public void write($StreamClass h, org.apache.spark.sql.catalyst.InternalRow input) {
         |    if (input instanceof $RowClass) {
         |      $RowClass row = ($RowClass) input;
         |      $body
         |    } else {
         |      $fallback.write(h, input);
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
  private def value(ctx: CodegenContext, f: Encoding.Field, o: Int): String = {
    val m = Canonical.VALUE_MARKER
    RowBytesWriter.readerOf(f.encoding) match {
      case Reader.Slot(kind) =>
        // The stream method's width and the canonical bits, read from the slot.
        val (width, bits) = kind match {
          case Kind.Bool => "Byte" -> s"(row.getBoolean($o) ? 1 : 0)"
          case Kind.Int8 => "Byte" -> s"row.getByte($o)"
          case Kind.Int16 => "Short" -> s"row.getShort($o)"
          case Kind.Int32 => "Int" -> s"row.getInt($o)"
          case Kind.Float32 => "Int" -> s"$CanonicalClass.floatBits(row.getFloat($o))"
          case Kind.Float64 => "Long" -> s"$CanonicalClass.doubleBits(row.getDouble($o))"
          case _ => "Long" -> s"row.getLong($o)"
        }
        s"h.putByteAnd$width($m, $bits);"
      case Reader.LengthPrefixed =>
        val offsetAndSize = ctx.freshName("offsetAndSize")
        val size = ctx.freshName("size")
        s"""long $offsetAndSize = row.getLong($o);
           |int $size = (int) $offsetAndSize;
           |h.putByteAndInt($m, $size);
           |h.putBytes(row.getBaseObject(), row.getBaseOffset() + ($offsetAndSize >>> 32), $size);""".stripMargin
      case Reader.Generic =>
        val writer = ctx.addReferenceObj(
          "writer",
          ValueWriter(f.encoding, Encoding.pathName(f.name)),
          classOf[ValueWriter].getName
        )
        val dataType = ctx.addReferenceObj("type", f.encoding.sparkType, "org.apache.spark.sql.types.DataType")
        s"""h.putByte($m);
           |$writer.write(h, row.get($o, $dataType));""".stripMargin
    }
  }
}
