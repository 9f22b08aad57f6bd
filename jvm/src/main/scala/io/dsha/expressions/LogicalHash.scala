package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription, NamedExpression}
import org.apache.spark.sql.catalyst.expressions.codegen._
import org.apache.spark.sql.catalyst.expressions.codegen.Block._
import org.apache.spark.sql.types.{BinaryType, DataType}

import io.dsha.encoding.{CodegenWriter, Encoding, RowSchema, ValueWriter}
import io.dsha.encoding.Encoding.pathName
import io.dsha.hash.Murmur3x64Stream

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
case class LogicalHash(children: Seq[Expression], fieldNames: Seq[String], reuseOutput: Boolean = false)
    extends Expression {
  require(children.size == fieldNames.size, "one field name per argument")

  override def dataType: DataType = BinaryType
  override def nullable: Boolean = false
  override def foldable: Boolean = children.forall(_.foldable)
  override def prettyName: String = "logical_hash"

  /** The canonical schema of the arguments; throws [[Encoding.Unsupported]] for types the algorithm cannot encode. */
  @transient lazy val schema: RowSchema = RowSchema(Encoding.ofRow(fieldNames.zip(children.map(_.dataType))))

  override def checkInputDataTypes(): TypeCheckResult = {
    if (children.isEmpty) {
      TypeCheckResult.TypeCheckFailure(s"$prettyName needs at least one column (for all columns, pass *)")
    } else {
      try {
        schema
        TypeCheckResult.TypeCheckSuccess
      } catch {
        case e: Encoding.Unsupported =>
          TypeCheckResult.TypeCheckFailure(s"$prettyName cannot hash column ${e.path}: ${e.reason}")
      }
    }
  }

  // Interpreted evaluation: the same writers the generated code mirrors, built once per task.
  @transient private lazy val evalStream = new Murmur3x64Stream
  @transient private lazy val evalOrder: Array[Expression] =
    schema.encoding.fields.map(f => children(f.ordinal)).toArray
  @transient private lazy val evalWriters: Array[ValueWriter] =
    schema.encoding.fields.map(f => ValueWriter(f.encoding, pathName(f.name))).toArray
  @transient private lazy val evalBuffer = new Array[Byte](16)

  override def eval(input: InternalRow): Any = {
    val h = evalStream
    h.reset(schema.prefixH1, schema.prefixH2, schema.prefixLength)
    var i = 0
    while (i < evalOrder.length) {
      val v = evalOrder(i).eval(input)
      if (v == null) {
        h.putByte(io.dsha.encoding.Canonical.NULL_MARKER)
      } else {
        h.putByte(io.dsha.encoding.Canonical.VALUE_MARKER)
        evalWriters(i).write(h, v)
      }
      i += 1
    }
    h.finish()
    if (reuseOutput) h.digestInto(evalBuffer) else h.digestBytes()
  }

  override protected def doGenCode(ctx: CodegenContext, ev: ExprCode): ExprCode = {
    val streamClass = classOf[Murmur3x64Stream].getName
    val h = ctx.addMutableState(streamClass, "dshaRow", x => s"$x = new $streamClass();")
    val columns = schema.encoding.fields.map { f =>
      val child = children(f.ordinal).genCode(ctx)
      s"""${child.code}
         |${CodegenWriter.writeNullable(
          ctx,
          f.encoding,
          child.isNull.toString,
          child.value.toString,
          h,
          pathName(f.name)
        )}""".stripMargin
    }
    // Wide rows: one method per group of columns, as HashExpression does; the stream is a field, so nothing to return.
    val body = ctx.splitExpressionsWithCurrentInputs(columns, "dshaWriteColumns")
    val result =
      if (reuseOutput) {
        val buffer = ctx.addMutableState("byte[]", "dshaDigest", x => s"$x = new byte[16];")
        s"$h.digestInto($buffer)"
      } else {
        s"$h.digestBytes()"
      }
    ev.copy(
      code = code"""
        |$h.reset(${schema.prefixH1}L, ${schema.prefixH2}L, ${schema.prefixLength}L);
        |$body
        |$h.finish();
        |byte[] ${ev.value} = $result;""".stripMargin,
      isNull = FalseLiteral
    )
  }

  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): LogicalHash =
    copy(children = newChildren)
}

object LogicalHash {

  /** Builds the SQL function from its (resolved) arguments, capturing their names before binding erases them. */
  def fromArguments(arguments: Seq[Expression]): LogicalHash = LogicalHash(arguments, fieldNames(arguments))

  /** A column's name, an alias's name, or `_N` for the N-th argument when it has no name. */
  def fieldNames(arguments: Seq[Expression]): Seq[String] = arguments.zipWithIndex.map {
    case (n: NamedExpression, _) => n.name
    case (_, i) => s"_${i + 1}"
  }
}
