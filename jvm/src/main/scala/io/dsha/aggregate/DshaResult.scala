package io.dsha.aggregate

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{DataType, StringType}

import io.dsha.algorithm.Algorithm
import io.dsha.output.DigestFormat
import io.dsha.types.CanonicalSchema

/** Turns an aggregation buffer (rows, then the combiner's words) into the digest string or the fingerprint. */
case class DshaResult(children: Seq[Expression], schema: CanonicalSchema, algorithm: Algorithm, fingerprint: Boolean)
    extends Expression {
  override def nullable: Boolean = false
  override def dataType: DataType = if (fingerprint) DigestFormat.FingerprintType else StringType

  override def eval(input: InternalRow): Any = {
    val values = children.map(_.eval(input).asInstanceOf[Long])
    result(values.head, values.tail.toArray)
  }

  /** Called by the generated code too (once per group, not per row). */
  def result(rows: Long, words: Array[Long]): Any =
    if (fingerprint) DigestFormat.fingerprint(algorithm, schema, rows, words)
    else DigestFormat.digestString(algorithm, schema.digest, rows, words)

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val self = ctx.addReferenceObj("dshaResult", this)
    val values = children.map(_.genCode(ctx))
    val javaType = if (fingerprint) "InternalRow" else "UTF8String"
    ev.copy(
      code = code"""
        |${values.map(_.code).mkString("\n")}
        |$javaType ${ev.value} = ($javaType) $self.result(${values.head.value},
        |  new long[] {${values.tail.map(_.value).mkString(", ")}});""".stripMargin,
      isNull = FalseLiteral
    )
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaResult =
    copy(children = newChildren)
}
