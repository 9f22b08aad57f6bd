package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.types.{DataType, LongType}

import io.dsha.algorithm.RowHasher

/** Word `i` of the finished row digest held by a [[RowDigest]]: the row digest reaches the combiner as longs. */
case class RowDigestWord(child: Expression, i: Int) extends UnaryExpression {
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  override def eval(input: InternalRow): Any = child.eval(input).asInstanceOf[RowHasher].digestWord(i)
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, h => s"$h.digestWord($i)")
  override protected def withNewChildInternal(c: Expression): RowDigestWord = copy(child = c)
}
