package io.dsha.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{BinaryExpression, Expression, ExpressionDescription}
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.util.GenericArrayData
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.dsha.sketch.{Sketch, SketchDecoder}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(left, right) - Decodes the difference of two dsha sketches (from dsha_sketch, SPEC.md §17.4): a struct of
      decoded (whether every differing row digest was recovered), cells (the cells compared: the sketches folded to a
      common size), cells_used (the smallest fold that decoded), estimate (when not decoded: about how many distinct
      row digests differ, to size a larger sketch), left_rows, right_rows, and entries: each differing row digest with
      its count,
      positive when the row is in excess on the left, negative on the right (a row 3 times on the left and once on the
      right has count 2), and its rows' filter word when filters_valid (SPEC.md §17.4), left_digest and right_digest (each table's dsha digest), and columns: each column's dsha
      digest on both sides, and whether they are equal. Sketches of different schemas are an error naming both; NULL
      gives NULL.
  """,
  arguments = """
    Arguments:
      * left, right - BINARY dsha sketches.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(a.s, b.s).entries[0].count FROM (SELECT dsha_sketch(*) AS s FROM VALUES (1), (2), (2) AS t(x)) a, (SELECT dsha_sketch(*) AS s FROM VALUES (1) AS t(x)) b;
       2
      > SELECT _FUNC_(a.s, b.s).decoded FROM (SELECT dsha_sketch(*) AS s FROM range(100)) a, (SELECT dsha_sketch(*) AS s FROM range(3, 103)) b;
       true
  """,
  group = "misc_funcs",
  since = "0.2.0"
)
// scalastyle:on line.size.limit
case class DshaSketchDiff(left: Expression, right: Expression) extends BinaryExpression with CodegenFallback {
  override def prettyName: String = "dsha_sketch_diff"
  override def dataType: DataType = DshaSketchDiff.ResultType

  override def checkInputDataTypes(): TypeCheckResult = (left.dataType, right.dataType) match {
    case (BinaryType, BinaryType) => TypeCheckResult.TypeCheckSuccess
    case _ =>
      TypeCheckResult.TypeCheckFailure(
        s"$prettyName takes two BINARY dsha sketches (from dsha_sketch), not ${left.dataType.sql} and ${right.dataType.sql}"
      )
  }

  override protected def nullSafeEval(l: Any, r: Any): Any = {
    val a = Sketch.parse(l.asInstanceOf[Array[Byte]])
    val b = Sketch.parse(r.asInstanceOf[Array[Byte]])
    val diff = a.minus(b)
    val m = diff.cells
    val result = SketchDecoder.decodeSmallest(diff)
    val filters = result.decoded && result.filtersValid && a.hasFilters && b.hasFilters
    val entries =
      if (!result.decoded) null
      else {
        new GenericArrayData(Array.tabulate[Any](result.size) { k =>
          val digest = java.nio.ByteBuffer.allocate(16).order(java.nio.ByteOrder.LITTLE_ENDIAN)
          digest.putLong(result.lo(k)).putLong(result.hi(k))
          new GenericInternalRow(Array[Any](digest.array(), result.count(k), if (filters) result.filter(k) else null))
        })
      }
    new GenericInternalRow(
      Array[Any](
        result.decoded,
        m,
        if (result.decoded) result.cells else null,
        if (result.decoded) null else result.estimate,
        a.rows,
        b.rows,
        UTF8String.fromString(a.digest),
        UTF8String.fromString(b.digest),
        entries,
        columns(a, b),
        filters
      )
    )
  }

  /** Each column of the left sketch by name, with its digest on both sides (NULL where the right has no such column). */
  private def columns(a: Sketch, b: Sketch): GenericArrayData = {
    val right = b.columns.map(_.name).zipWithIndex.toMap
    new GenericArrayData(a.columns.indices.map { c =>
      val r = right.get(a.columns(c).name)
      val l = a.columnDigest(c)
      val rd = r.map(b.columnDigest).orNull
      new GenericInternalRow(
        Array[Any](
          UTF8String.fromString(a.columns(c).name),
          UTF8String.fromString(l),
          UTF8String.fromString(rd),
          l == rd
        )
      ): Any
    }.toArray)
  }

  override protected def withNewChildrenInternal(l: Expression, r: Expression): DshaSketchDiff =
    copy(left = l, right = r)
}

object DshaSketchDiff {
  val EntryType: StructType = StructType(
    Seq(
      StructField("digest", BinaryType, nullable = false),
      StructField("count", LongType, nullable = false),
      StructField("filter", LongType) // the rows' filter word (SPEC.md §17.2.1), NULL unless filters_valid
    )
  )

  val ColumnType: StructType = StructType(
    Seq(
      StructField("name", StringType, nullable = false),
      StructField("left_digest", StringType, nullable = false),
      StructField("right_digest", StringType),
      StructField("equal", BooleanType, nullable = false)
    )
  )

  val ResultType: StructType = StructType(
    Seq(
      StructField("decoded", BooleanType, nullable = false),
      StructField("cells", IntegerType, nullable = false),
      StructField("cells_used", IntegerType),
      StructField("estimate", LongType),
      StructField("left_rows", LongType, nullable = false),
      StructField("right_rows", LongType, nullable = false),
      StructField("left_digest", StringType, nullable = false),
      StructField("right_digest", StringType, nullable = false),
      StructField("entries", ArrayType(EntryType, containsNull = false)),
      StructField("columns", ArrayType(ColumnType, containsNull = false), nullable = false),
      StructField("filters_valid", BooleanType, nullable = false)
    )
  )
}
