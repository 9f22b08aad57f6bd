package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, LongType}

import io.dsha.hash.UInt128

/** The high word of (highA:lowA) + (highB:lowB) mod 2^128: [[UInt128.addHigh]] as an expression. Never null. */
case class AddHighWithCarry(highA: Expression, highB: Expression, lowA: Expression, lowB: Expression)
    extends Expression {
  override def children: Seq[Expression] = Seq(highA, highB, lowA, lowB)
  override def dataType: DataType = LongType
  override def nullable: Boolean = false

  override def eval(input: InternalRow): Any = UInt128.addHigh(
    highA.eval(input).asInstanceOf[Long],
    highB.eval(input).asInstanceOf[Long],
    lowA.eval(input).asInstanceOf[Long],
    lowB.eval(input).asInstanceOf[Long]
  )

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val Seq(ha, hb, la, lb) = children.map(_.genCode(ctx))
    ev.copy(
      code = code"""
        |${ha.code}
        |${hb.code}
        |${la.code}
        |${lb.code}
        |long ${ev.value} = ${classOf[UInt128].getName}.addHigh(${ha.value}, ${hb.value}, ${la.value}, ${lb.value});
        |""".stripMargin,
      isNull = FalseLiteral
    )
  }

  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): AddHighWithCarry =
    AddHighWithCarry(c(0), c(1), c(2), c(3))
}
