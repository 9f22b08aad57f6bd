package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{BooleanType, DataType}

import io.dsha.algorithm.DshaV1
import io.dsha.sketch.DigestSet

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(digests, expr1, expr2, ...) - Returns true when logical_hash(expr1, expr2, ...), the row digest of SPEC.md,
      is one of `digests`, without making the digest a value: a filter that fetches rows by digest (dsha.diff fetches
      the rows a sketch difference names this way). `digests` is a constant BINARY of 16-byte row digests
      concatenated, read once when the query is analysed; plans show only their number.
  """,
  arguments = """
    Arguments:
      * digests - a constant BINARY whose length is a multiple of 16: the row digests, as logical_hash returns them.
      * expr1, expr2, ... - columns or expressions, identified by name as in logical_hash; `*` for all columns
          (where Spark takes a star, e.g. in a WHERE clause).
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(X'BB47CD67420C80FA77D3941F0E6D06D1', 1, 'a');
       true
      > SELECT x FROM VALUES (1), (2), (3) AS t(x) WHERE _FUNC_(concat(X'376481BE99BD3F5687CF1B0A823AF34A', X'0577EFC748ED10008FB3D04C1864097A'), x);
       1
       3
  """,
  group = "hash_funcs",
  since = "0.2.0"
)
// scalastyle:on line.size.limit
case class LogicalHashIn(children: Seq[Expression], fieldNames: Seq[String], digests: DigestSet)
    extends RowHashExpression
    with NamedArguments {
  require(children.size == fieldNames.size, "one field name per argument")

  override def algorithm: DshaV1.type = DshaV1
  override def dataType: DataType = BooleanType
  override def foldable: Boolean = children.forall(_.foldable)
  override def prettyName: String = "logical_hash_in"
  override def withFieldNames(names: Seq[String]): LogicalHashIn = copy(fieldNames = names)

  override def eval(input: InternalRow): Any = {
    val h = hashRow(input)
    digests.contains(h.digestWord(0), h.digestWord(1))
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val (code, h) = genHashRow(ctx)
    val set = ctx.addReferenceObj("dshaDigests", digests, classOf[DigestSet].getName)
    ev.copy(
      code = code"""
        |$code
        |boolean ${ev.value} = $set.contains($h.digestWord(0), $h.digestWord(1));""".stripMargin,
      isNull = FalseLiteral
    )
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): LogicalHashIn =
    copy(children = newChildren)
}

object LogicalHashIn {

  /** The function's builder: the digests (a constant BINARY, read now), then the columns. */
  def build(args: Seq[Expression]): LogicalHashIn =
    ConstantBytes.build("logical_hash_in", "the row digests", args)((columns, bytes) =>
      LogicalHashIn(columns, NamedArguments.of(columns), new DigestSet(bytes))
    )
}
