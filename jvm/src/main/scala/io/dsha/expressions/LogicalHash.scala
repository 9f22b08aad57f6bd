package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}
import org.apache.spark.sql.catalyst.expressions.codegen.{CodegenContext, ExprCode, FalseLiteral}
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{BinaryType, DataType}

import io.dsha.algorithm.{Algorithm, DshaV1}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the 16-byte dsha row digest of the arguments: MurmurHash3_x64_128 of their
      canonical encoding, prefixed by the digest of their canonical schema. Arguments are identified by name (column
      names, aliases; other expressions are named _1, _2, ... by position), so their order does not matter. Nulls,
      empty strings and empty arrays are all distinct; maps are hashed independently of entry order; -0.0 equals 0.0
      and all NaNs are equal. Defined in SPEC.md (dsha algorithm v1).
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions of any type SPEC.md covers (all Spark SQL types but
          geospatial ones); `*` expands to all columns.
  """,
  examples = """
    Examples:
      > SELECT hex(_FUNC_(1, 'a'));
       BB47CD67420C80FA77D3941F0E6D06D1
      > SELECT _FUNC_(map(1, 2, 3, 4)) = _FUNC_(map(3, 4, 1, 2));
       true
      > SELECT _FUNC_(a, b) = _FUNC_(b, a) FROM VALUES (1, 'x') AS t(a, b);
       true
  """,
  group = "hash_funcs",
  since = "0.1.0"
)
// scalastyle:on line.size.limit
case class LogicalHash(children: Seq[Expression], fieldNames: Seq[String], algorithm: Algorithm = DshaV1)
    extends RowHashExpression
    with NamedArguments {
  require(children.size == fieldNames.size, "one field name per argument")

  override def dataType: DataType = BinaryType
  override def foldable: Boolean = children.forall(_.foldable)
  override def prettyName: String = "logical_hash"
  override def withFieldNames(names: Seq[String]): LogicalHash = copy(fieldNames = names)

  override def eval(input: InternalRow): Any = {
    val h = hashRow(input)
    h.digestInto(new Array[Byte](h.digestLength()))
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val (code, h) = genHashRow(ctx)
    ev.copy(
      code = code"""
        |$code
        |byte[] ${ev.value} = $h.digestInto(new byte[$h.digestLength()]);""".stripMargin,
      isNull = FalseLiteral
    )
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): LogicalHash =
    copy(children = newChildren)
}
