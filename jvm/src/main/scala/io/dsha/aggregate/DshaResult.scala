package io.dsha.aggregate

import org.apache.spark.sql.catalyst.expressions.{Expression, TernaryExpression}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode}
import org.apache.spark.sql.types.{DataType, StringType}

import io.dsha.encoding.RowSchema
import io.dsha.output.Digest

/** Turns the aggregation buffer (rows, high and low words of the sum) into the digest string or the fingerprint. */
case class DshaResult(
    rows: Expression,
    sumHigh: Expression,
    sumLow: Expression,
    schema: RowSchema,
    fingerprint: Boolean
) extends TernaryExpression {
  override def first: Expression = rows
  override def second: Expression = sumHigh
  override def third: Expression = sumLow
  override def nullable: Boolean = false
  override def dataType: DataType = if (fingerprint) Digest.FingerprintType else StringType

  override protected def nullSafeEval(r: Any, high: Any, low: Any): Any = {
    val (n, h, l) = (r.asInstanceOf[Long], high.asInstanceOf[Long], low.asInstanceOf[Long])
    if (fingerprint) Digest.fingerprint(schema, n, h, l) else Digest.digestString(schema.digest, n, h, l)
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val digest = Digest.getClass.getName.stripSuffix("$")
    if (fingerprint) {
      val schemaRef = ctx.addReferenceObj("dshaSchema", schema, classOf[RowSchema].getName)
      defineCodeGen(ctx, ev, (n, h, l) => s"$digest.fingerprint($schemaRef, $n, $h, $l)")
    } else {
      val digestRef = ctx.addReferenceObj("dshaSchemaDigest", schema.digest, "byte[]")
      defineCodeGen(ctx, ev, (n, h, l) => s"$digest.digestString($digestRef, $n, $h, $l)")
    }
  }

  override protected def withNewChildrenInternal(a: Expression, b: Expression, c: Expression): DshaResult =
    copy(rows = a, sumHigh = b, sumLow = c)
}
