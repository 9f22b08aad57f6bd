package io.dsha.aggregate

import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Expression, ExpressionDescription, Literal}
import org.apache.spark.sql.catalyst.expressions.aggregate.DeclarativeAggregate
import org.apache.spark.sql.types.DataType

import io.dsha.algorithm.{Algorithm, DshaV1}
import io.dsha.expressions.{NamedArguments, RowDigest, WrappingAdd}
import io.dsha.types.CanonicalSchema

/**
 * The table digest: the algorithm's combination of row digests (dsha-v1: a modular sum, so row order, partitioning and
 * file layout cannot matter, while duplicates count), with the row count and the schema digest, finalised by
 * [[DshaResult]].
 *
 * A DeclarativeAggregate whose buffer is fixed-width longs ([[DigestState]]), so HashAggregateExec keeps it in
 * whole-stage codegen. The update expressions read the row digest as longs from one [[RowDigest]]; subexpression
 * elimination (on by default) computes it once per row.
 */
abstract class DshaAggregate extends DeclarativeAggregate with NamedArguments {
  def algorithm: Algorithm

  @transient protected lazy val rowDigest: RowDigest = RowDigest(children, fieldNames, algorithm)
  def schema: CanonicalSchema = rowDigest.schema

  override def checkInputDataTypes(): TypeCheckResult = rowDigest.checkInputDataTypes() match {
    case TypeCheckResult.TypeCheckFailure(message) =>
      TypeCheckResult.TypeCheckFailure(message.replaceFirst("^row_digest", prettyName))
    case ok => ok
  }

  override def nullable: Boolean = false

  private def combiner = algorithm.combiner

  override lazy val aggBufferAttributes: Seq[AttributeReference] = DigestState.bufferAttributes(combiner)
  private def rows = aggBufferAttributes.head
  private def words = aggBufferAttributes.tail

  override lazy val initialValues: Seq[Expression] = aggBufferAttributes.map(_ => Literal(0L))

  override lazy val updateExpressions: Seq[Expression] =
    WrappingAdd(rows, Literal(1L)) +: combiner.updateExpressions(words, rowDigest)

  override lazy val mergeExpressions: Seq[Expression] =
    WrappingAdd(rows.left, rows.right) +: combiner.mergeExpressions(words.map(_.left), words.map(_.right))

  /** What the aggregate returns of its state. */
  protected def form: DshaResult.Form

  override lazy val evaluateExpression: Expression = DshaResult(aggBufferAttributes, schema, algorithm, form)

  override def dataType: DataType = form.dataType
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
case class Dsha(children: Seq[Expression], fieldNames: Seq[String], algorithm: Algorithm = DshaV1)
    extends DshaAggregate {
  override def prettyName: String = "dsha"
  override def withFieldNames(names: Seq[String]): Dsha = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.Digest
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
case class DshaFingerprint(children: Seq[Expression], fieldNames: Seq[String], algorithm: Algorithm = DshaV1)
    extends DshaAggregate {
  override def prettyName: String = "dsha_fingerprint"
  override def withFieldNames(names: Seq[String]): DshaFingerprint = copy(fieldNames = names)
  override protected def form: DshaResult.Form = DshaResult.Fingerprint
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaFingerprint =
    copy(children = newChildren)
}
