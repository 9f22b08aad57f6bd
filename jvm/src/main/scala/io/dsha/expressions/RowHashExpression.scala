package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenContext

import io.dsha.algorithm.{Algorithm, RowHasher}
import io.dsha.encoding.{Canonical, GenerateValueWriter, InterpretedValueWriter}
import io.dsha.types.CanonicalSchema
import io.dsha.types.CanonicalSchema.pathName

/**
 * Hashes the arguments of one input row with an algorithm's row hasher: the canonical schema of the arguments (names
 * and types), then each argument's slot in canonical order. Subclasses differ only in what they return: the digest's
 * bytes ([[LogicalHash]]) or the finished hasher itself, whose words a combiner reads ([[RowDigest]]).
 */
abstract class RowHashExpression extends Expression {
  def fieldNames: Seq[String]
  def algorithm: Algorithm

  override def nullable: Boolean = false

  /** The canonical schema of the arguments; throws [[CanonicalSchema.Unsupported]] for types it cannot encode. */
  @transient lazy val schema: CanonicalSchema =
    CanonicalSchema.of(fieldNames.zip(children.map(_.dataType)), algorithm.description)

  override def checkInputDataTypes(): TypeCheckResult = {
    if (children.isEmpty) {
      TypeCheckResult.TypeCheckFailure(s"$prettyName needs at least one column (for all columns, pass *)")
    } else {
      try {
        schema
        TypeCheckResult.TypeCheckSuccess
      } catch {
        case e: CanonicalSchema.Unsupported =>
          TypeCheckResult.TypeCheckFailure(s"$prettyName cannot hash column ${e.path}: ${e.reason}")
      }
    }
  }

  // Interpreted evaluation: writers derived from the same table the generated code is, built once per task.
  @transient private lazy val evalHasher: RowHasher = algorithm.newRowHasher(schema.digest)
  @transient private lazy val evalOrder: Array[Expression] = schema.fields.map(f => children(f.ordinal)).toArray
  @transient private lazy val evalWriters: Array[InterpretedValueWriter] =
    schema.fields.map(f => InterpretedValueWriter(f.dataType, pathName(f.name), algorithm)).toArray

  /** Hashes the arguments of `input`; the returned hasher holds the finished digest until the next call. */
  protected def hashRow(input: InternalRow): RowHasher = {
    val h = evalHasher
    h.startRow()
    var i = 0
    while (i < evalOrder.length) {
      val v = evalOrder(i).eval(input)
      if (v == null) {
        h.putByte(Canonical.NULL_MARKER)
      } else {
        h.putByte(Canonical.VALUE_MARKER)
        evalWriters(i).write(h, v)
      }
      i += 1
    }
    h.finishRow()
    h
  }

  /** Generated [[hashRow]]: the code, and the name of the hasher field (of the algorithm's concrete class). */
  protected def genHashRow(ctx: CodegenContext): (String, String) = {
    val cls = algorithm.rowHasherClass.getName
    val digest = ctx.addReferenceObj("dshaSchemaDigest", schema.digest, "byte[]")
    val alg = ctx.addReferenceObj("dshaAlgorithm", algorithm, classOf[Algorithm].getName)
    // A plain field (never compacted into an array): split methods and entry writers refer to it by name.
    val h = ctx.addMutableState(cls, "dshaRow", x => s"$x = ($cls) $alg.newRowHasher($digest);", forceInline = true)
    val writer = new GenerateValueWriter(ctx, algorithm)
    val columns = schema.fields.map { f =>
      val child = children(f.ordinal).genCode(ctx)
      s"""${child.code}
         |${writer.writeNullable(f.dataType, child.isNull.toString, child.value.toString, h, pathName(f.name))}""".stripMargin
    }
    // Wide rows: one method per group of columns, as HashExpression does; the hasher is a field, nothing to return.
    val body = ctx.splitExpressionsWithCurrentInputs(columns, "dshaWriteColumns")
    (s"$h.startRow();\n$body\n$h.finishRow();", h)
  }
}
