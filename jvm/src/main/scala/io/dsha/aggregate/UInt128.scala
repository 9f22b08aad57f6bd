package io.dsha.aggregate

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, UnaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, LongType}

// The digest sum is a 128-bit unsigned integer kept as two longs. Catalyst's Add throws on overflow under ANSI mode
// and changed its constructor in Spark 4.1, so wrapping arithmetic gets expressions of its own. Inputs are aggregation
// buffer slots and row digests, which are never null.

/** left + right mod 2^64. */
case class WrappingAdd(left: Expression, right: Expression) extends BinaryExpression {
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  override def eval(input: InternalRow): Any =
    left.eval(input).asInstanceOf[Long] + right.eval(input).asInstanceOf[Long]
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, (l, r) => s"$l + $r")
  override protected def withNewChildrenInternal(l: Expression, r: Expression): WrappingAdd = copy(l, r)
}

object UInt128 {

  /** High word of (highA:lowA) + (highB:lowB) mod 2^128: highA + highB + carry out of lowA + lowB. */
  def addHigh(highA: Long, highB: Long, lowA: Long, lowB: Long): Long =
    highA + highB + (if (java.lang.Long.compareUnsigned(lowA + lowB, lowA) < 0) 1L else 0L)
}

/** [[UInt128.addHigh]] as an expression (its generated code inlines the same arithmetic). */
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
        |long ${ev.value} = ${ha.value} + ${hb.value} +
        |  (Long.compareUnsigned(${la.value} + ${lb.value}, ${la.value}) < 0 ? 1L : 0L);""".stripMargin,
      isNull = FalseLiteral
    )
  }
  override protected def withNewChildrenInternal(c: IndexedSeq[Expression]): AddHighWithCarry =
    AddHighWithCarry(c(0), c(1), c(2), c(3))
}

/** One 64-bit word of a 16-byte row digest: bytes 0..7 (low) or 8..15 (high), little-endian. */
case class DigestWord(child: Expression, high: Boolean) extends UnaryExpression {
  override def dataType: DataType = LongType
  override def nullable: Boolean = false
  private def offset: Int = if (high) 8 else 0
  override def eval(input: InternalRow): Any =
    DigestWord.readLongLE(child.eval(input).asInstanceOf[Array[Byte]], offset)
  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode =
    defineCodeGen(ctx, ev, d => s"${classOf[DigestWord].getName}.readLongLE($d, $offset)")
  override protected def withNewChildInternal(c: Expression): DigestWord = copy(child = c)
}

object DigestWord {
  private val LittleEndian = java.nio.ByteOrder.nativeOrder() == java.nio.ByteOrder.LITTLE_ENDIAN

  def readLongLE(bytes: Array[Byte], at: Int): Long = {
    val v = org.apache.spark.unsafe.Platform.getLong(bytes, org.apache.spark.unsafe.Platform.BYTE_ARRAY_OFFSET + at)
    if (LittleEndian) v else java.lang.Long.reverseBytes(v)
  }
}
