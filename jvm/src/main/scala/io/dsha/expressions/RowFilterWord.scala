package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, LongType}

import io.dsha.sketch.FilterWord
import io.dsha.types.CanonicalType._

/**
 * The filter word of a row of values (SPEC.md §17.2.1), for sketches computed by a projection (the row bytes path
 * reads it with [[io.dsha.sketch.FilterWordReader]]). `row`: the canonical row of `children` (fields carry argument
 * positions).
 */
case class RowFilterWord(children: Seq[Expression], row: StructOf) extends Expression {
  override def dataType: DataType = LongType
  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = FilterWord.of(row, f => children(f.ordinal).eval(input))

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val sum = ctx.freshName("filterSum")
    val terms = row.fields.zipWithIndex.map { case (f, i) =>
      val value = children(f.ordinal).genCode(ctx)
      val word = f.dataType match {
        case Fixed(kind, _, _) => s"(long) ${kind.bitsCode(value.value.toString)}"
        case LengthPrefixed(BytesKind.Utf8, _, _) => s"(long) ${value.value}.numBytes()"
        case LengthPrefixed(BytesKind.Bytes, _, _) => s"(long) ${value.value}.length"
        case _: Composite | _: Void | _: Variant | _: ArrayOf | _: MapOf | _: StructOf => "1L"
      }
      s"""${value.code}
         |$sum += ${FilterWord.multiplier(i)}L * (${value.isNull} ? ${FilterWord.NullWord}L : $word);""".stripMargin
    }
    // Wide rows: split into methods as Spark splits projections, each summing its columns' terms.
    val body = ctx.splitExpressionsWithCurrentInputs(
      terms,
      "filterWords",
      returnType = "long",
      makeSplitFunction = code => s"long $sum = 0L;\n$code\nreturn $sum;",
      foldFunctions = calls => calls.map(c => s"$sum += $c;").mkString("\n")
    )
    ev.copy(
      code = code"""
        |long $sum = 0L;
        |$body
        |long ${ev.value} = ${classOf[io.dsha.sketch.SketchCells].getName}.mix($sum) >>> 32;""".stripMargin,
      isNull = org.apache.spark.sql.catalyst.expressions.codegen.FalseLiteral
    )
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RowFilterWord =
    copy(children = newChildren)
}
