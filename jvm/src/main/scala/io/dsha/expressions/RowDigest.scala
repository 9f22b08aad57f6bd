package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, ObjectType}

import io.dsha.algorithm.Algorithm

/**
 * The row digest of the arguments, for the aggregates: its value is the finished row hasher, from which
 * [[RowDigestWord]] reads the digest as longs (no byte array in between). The aggregates' update expressions all
 * read it; subexpression elimination computes it once per row. Never folded: a hasher is not a literal.
 */
case class RowDigest(children: Seq[Expression], fieldNames: Seq[String], algorithm: Algorithm)
    extends RowHashExpression {
  override def dataType: DataType = ObjectType(algorithm.rowHasherClass)
  override def foldable: Boolean = false
  override def prettyName: String = "row_digest"

  override def eval(input: InternalRow): Any = hashRow(input)

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val (code, h) = genHashRow(ctx)
    ev.copy(
      code = code"""
        |$code
        |${algorithm.rowHasherClass.getName} ${ev.value} = $h;""".stripMargin,
      isNull = FalseLiteral
    )
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): RowDigest =
    copy(children = newChildren)
}
