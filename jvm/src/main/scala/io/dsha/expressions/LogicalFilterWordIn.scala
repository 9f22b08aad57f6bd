package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{BooleanType, DataType}

import io.dsha.algorithm.DshaV1
import io.dsha.sketch.FilterWordSet

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(words, expr1, expr2, ...) - Returns true when the filter word of the arguments (SPEC.md §17.2.1: a 32-bit
      word of their fixed-width values and lengths, which a dsha sketch difference gives with each differing row
      digest) is one of `words`. Cheaper than hashing the row: dsha.diff asks it before logical_hash_in, so that only
      the rows it lets through are hashed. `words` is a constant BINARY of 4-byte little-endian words concatenated,
      read once when the query is analysed; plans show only their number.
  """,
  arguments = """
    Arguments:
      * words - a constant BINARY whose length is a multiple of 4: the filter words.
      * expr1, expr2, ... - columns or expressions, identified by name as in logical_hash.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(X'00000000', 1);
       false
  """,
  group = "hash_funcs",
  since = "0.3.0"
)
// scalastyle:on line.size.limit
case class LogicalFilterWordIn(children: Seq[Expression], fieldNames: Seq[String], words: FilterWordSet)
    extends RowHashExpression
    with NamedArguments {
  require(children.size == fieldNames.size, "one field name per argument")

  override def algorithm: DshaV1.type = DshaV1
  override def dataType: DataType = BooleanType
  override def foldable: Boolean = children.forall(_.foldable)
  override def prettyName: String = "logical_filter_word_in"
  override def withFieldNames(names: Seq[String]): LogicalFilterWordIn = copy(fieldNames = names)

  @transient private lazy val word = RowFilterWord(children, schema.row)

  override def eval(input: InternalRow): Any = words.contains(word.eval(input).asInstanceOf[Long])

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val w = word.genCode(ctx)
    val set = ctx.addReferenceObj("dshaFilterWords", words, classOf[FilterWordSet].getName)
    ev.copy(
      code = code"""
        |${w.code}
        |boolean ${ev.value} = $set.contains(${w.value});""".stripMargin,
      isNull = FalseLiteral
    )
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): LogicalFilterWordIn =
    copy(children = newChildren)
}

object LogicalFilterWordIn {

  /** The function's builder: the words (a constant BINARY, read now), then the columns. */
  def build(args: Seq[Expression]): LogicalFilterWordIn =
    ConstantBytes.build("logical_filter_word_in", "the filter words", args)((columns, bytes) =>
      LogicalFilterWordIn(columns, NamedArguments.of(columns), new FilterWordSet(bytes))
    )
}
