package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, LongType}

import io.dsha.hash.WideAdd

/**
 * The top word of the sum of two multi-word unsigned numbers given by their lowest words (least significant first,
 * `a.size == b.size`): word k of a wider sum is `WordOfSum(a.take(k + 1), b.take(k + 1))`. Never null.
 */
case class WordOfSum(a: Seq[Expression], b: Seq[Expression]) extends Expression {
  require(a.size == b.size && a.nonEmpty)
  override def children: Seq[Expression] = a ++ b
  override def dataType: DataType = LongType
  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = {
    val x = a.map(_.eval(input).asInstanceOf[Long])
    val y = b.map(_.eval(input).asInstanceOf[Long])
    var carry = 0L
    for (i <- 0 until x.size - 1) carry = WideAdd.carry(x(i), y(i), carry)
    x.last + y.last + carry
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val xs = a.map(_.genCode(ctx))
    val ys = b.map(_.genCode(ctx))
    val carry = ctx.freshName("carry")
    val wide = classOf[WideAdd].getName
    val carries = (0 until a.size - 1).map(i => s"$carry = $wide.carry(${xs(i).value}, ${ys(i).value}, $carry);")
    ev.copy(
      code = code"""
        |${(xs ++ ys).map(_.code.toString).mkString("\n")}
        |long $carry = 0L;
        |${carries.mkString("\n")}
        |long ${ev.value} = ${xs.last.value} + ${ys.last.value} + $carry;
        |""".stripMargin,
      isNull = FalseLiteral
    )
  }

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): WordOfSum =
    WordOfSum(c.take(a.size), c.drop(a.size))
}
