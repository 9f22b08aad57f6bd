package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.types.{DataType, LongType}

/**
 * left + right mod 2^64. Catalyst's Add throws on overflow under ANSI mode and changed its constructor in Spark 4.1,
 * so dsha's modular sums have their own. Inputs are buffer slots and row digest words, never null.
 */
case class WrappingAdd(left: Expression, right: Expression) extends BinaryExpression {
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  override def eval(input: InternalRow): Any =
    left.eval(input).asInstanceOf[Long] + right.eval(input).asInstanceOf[Long]
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, (l, r) => s"$l + $r")
  override protected def withNewChildrenInternal(l: Expression, r: Expression): WrappingAdd = copy(l, r)
}
