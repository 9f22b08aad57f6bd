package io.dsha.aggregate

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Expression, ExpressionDescription, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate
import org.apache.spark.sql.types.{DataType, LongType, StringType}

import io.dsha.encoding.RowSchema
import io.dsha.expressions.LogicalHash
import io.dsha.output.Digest

/**
 * The table digest: a modular sum of row digests (so row order, partitioning and file layout cannot matter, while
 * duplicates count), with the row count and the schema digest, finalised by [[DshaResult]].
 *
 * A DeclarativeAggregate with three fixed-width long slots, so HashAggregateExec keeps it in whole-stage codegen. The
 * two update expressions read the same row digest; with subexpression elimination (on by default) it is computed once
 * per row into a reused buffer.
 */
abstract class DshaAggregate extends DeclarativeAggregate {
  def fieldNames: Seq[String]

  /** Row digest shared by the update expressions (reuseOutput: its bytes are read at once, never kept). */
  @transient protected lazy val rowDigest: LogicalHash = LogicalHash(children, fieldNames, reuseOutput = true)
  def schema: RowSchema = rowDigest.schema

  override def checkInputDataTypes(): TypeCheckResult = rowDigest.checkInputDataTypes() match {
    case TypeCheckResult.TypeCheckFailure(message) =>
      TypeCheckResult.TypeCheckFailure(message.replaceFirst("^logical_hash", prettyName))
    case ok => ok
  }

  override def nullable: Boolean = false

  protected lazy val rows = AttributeReference("rows", LongType, nullable = false)()
  protected lazy val sumLow = AttributeReference("sum_low", LongType, nullable = false)()
  protected lazy val sumHigh = AttributeReference("sum_high", LongType, nullable = false)()

  override lazy val aggBufferAttributes: Seq[AttributeReference] = Seq(rows, sumLow, sumHigh)

  override lazy val initialValues: Seq[Expression] = Seq(Literal(0L), Literal(0L), Literal(0L))

  override lazy val updateExpressions: Seq[Expression] = {
    val low = DigestWord(rowDigest, high = false)
    val high = DigestWord(rowDigest, high = true)
    Seq(WrappingAdd(rows, Literal(1L)), WrappingAdd(sumLow, low), AddHighWithCarry(sumHigh, high, sumLow, low))
  }

  override lazy val mergeExpressions: Seq[Expression] = Seq(
    WrappingAdd(rows.left, rows.right),
    WrappingAdd(sumLow.left, sumLow.right),
    AddHighWithCarry(sumHigh.left, sumHigh.right, sumLow.left, sumLow.right)
  )

  protected def fingerprint: Boolean

  override lazy val evaluateExpression: Expression = DshaResult(rows, sumHigh, sumLow, schema, fingerprint)

  override def dataType: DataType = if (fingerprint) Digest.FingerprintType else StringType
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the dsha digest of the rows of a table or group: a multibase (base16) multihash
      string that depends on the values and the canonical schema of the arguments, the number of rows (duplicates
      count) and nothing else: not row order, partitioning, file layout, column order or nullability. Defined in SPEC.md
      (dsha algorithm v1).
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(*) FROM VALUES (1, 'a'), (2, 'b') AS t(id, name);
       f81b4f50120c0fe1c9d4d3e8b50a9fe4c8afe5f03db958ab0a2d154157578fe80e53f8dab68
      > SELECT count(DISTINCT d) FROM (SELECT k, _FUNC_(*) AS d FROM VALUES (1, 'a'), (2, 'a') AS t(k, v) GROUP BY k);
       2
  """,
  group = "agg_funcs",
  since = "0.1.0"
)
// scalastyle:on line.size.limit
case class Dsha(children: Seq[Expression], fieldNames: Seq[String]) extends DshaAggregate {
  override def prettyName: String = "dsha"
  override protected def fingerprint: Boolean = false
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): Dsha =
    copy(children = newChildren)
}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the dsha digest with its parts, as a struct: digest (the dsha string), rows,
      schema_digest (hex SHA-256 of the canonical schema), content_sum (hex of the 128-bit sum of row digests), schema
      (the canonical schema), algorithm and multihash (the digest's binary form).
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions, identified by name; `*` hashes every column.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(*).rows FROM range(5);
       5
      > SELECT _FUNC_(*).schema FROM range(5);
       struct<"id":bigint>
  """,
  group = "agg_funcs",
  since = "0.1.0"
)
// scalastyle:on line.size.limit
case class DshaFingerprint(children: Seq[Expression], fieldNames: Seq[String]) extends DshaAggregate {
  override def prettyName: String = "dsha_fingerprint"
  override protected def fingerprint: Boolean = true
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaFingerprint =
    copy(children = newChildren)
}
