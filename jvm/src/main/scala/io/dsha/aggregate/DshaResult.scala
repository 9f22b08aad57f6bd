package io.dsha.aggregate

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{BinaryType, DataType, StringType}

import io.dsha.algorithm.Algorithm
import io.dsha.output.DigestFormat
import io.dsha.types.CanonicalSchema

/** Turns an aggregation buffer (rows, then the combiner's words) into the digest string, the fingerprint or the state. */
case class DshaResult(children: Seq[Expression], schema: CanonicalSchema, algorithm: Algorithm, form: DshaResult.Form)
    extends Expression {
  override def nullable: Boolean = false
  override def dataType: DataType = form.dataType

  override def eval(input: InternalRow): Any = {
    val values = children.map(_.eval(input).asInstanceOf[Long])
    result(values.head, values.tail.toArray)
  }

  /** Called by the generated code too (once per group, not per row). */
  def result(rows: Long, words: Array[Long]): Any = form(DigestState.Portable(algorithm, schema, rows, words))

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val self = ctx.addReferenceObj("dshaResult", this)
    val values = children.map(_.genCode(ctx))
    val javaType = form.javaType
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

object DshaResult {

  /** What an aggregate returns of a state: the digest string, the fingerprint struct or the state's bytes. */
  sealed abstract class Form(val dataType: DataType, val javaType: String) extends Serializable {
    def apply(state: DigestState.Portable): Any
  }

  case object Digest extends Form(StringType, "UTF8String") {
    def apply(s: DigestState.Portable): Any = DigestFormat.digestString(s.algorithm, s.schemaDigest, s.rows, s.words)
  }

  case object Fingerprint extends Form(DigestFormat.FingerprintType, "InternalRow") {
    def apply(s: DigestState.Portable): Any =
      DigestFormat.fingerprint(s.algorithm, s.schemaText, s.schemaDigest, s.rows, s.words)
  }

  case object State extends Form(BinaryType, "byte[]") {
    def apply(s: DigestState.Portable): Any = s.toBytes
  }
}
