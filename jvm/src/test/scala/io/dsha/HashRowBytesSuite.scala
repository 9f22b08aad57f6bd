package io.dsha

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.catalyst.CatalystTypeConverters
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{BoundReference, GenericInternalRow, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.CalendarInterval

import io.dsha.algorithm.DshaV1
import io.dsha.encoding.{GenerateRowBytesWriter, InterpretedRowBytesWriter, RowBytesSpec, RowBytesWriter}
import io.dsha.execution.{HashRowBytes, PartialDshaExec}
import io.dsha.expressions.LogicalHash

/**
 * The partial step that hashes UnsafeRows from their bytes: the same bytes as LogicalHash for every type and row kind,
 * the same digest as Spark's generated aggregate, and used exactly where the rule says.
 */
class HashRowBytesSuite extends SparkSuite with AdaptiveSparkPlanHelper {

  /** Flat columns of every type the direct reader handles, plus ones it hands to the value writers. */
  private val schema = StructType(Seq(
    StructField("s", StringType),
    StructField("b", BooleanType),
    StructField("i8", ByteType),
    StructField("i16", ShortType),
    StructField("i32", IntegerType),
    StructField("i64", LongType),
    StructField("f32", FloatType),
    StructField("f64", DoubleType),
    StructField("bin", BinaryType),
    StructField("d", DateType),
    StructField("ts", TimestampType),
    StructField("ntz", TimestampNTZType),
    StructField("ym", YearMonthIntervalType()),
    StructField("dt", DayTimeIntervalType()),
    StructField("dec", DecimalType(18, 3)),
    StructField("wide", DecimalType(38, 6)),
    StructField("ci", CalendarIntervalType),
    StructField("arr", ArrayType(StringType)),
    StructField("nothing", NullType)
  ))

  private def randomValue(gen: RandomTables, dt: DataType): Any = {
    val r = gen.random
    if (r.nextInt(6) == 0) null
    else dt match {
      case StringType => Seq("", "a", "é€😀", r.alphanumeric.take(r.nextInt(90)).mkString)(r.nextInt(4))
      case ShortType => r.nextInt(65536).toShort
      case TimestampNTZType => java.time.LocalDateTime.of(1900 + r.nextInt(300), 1 + r.nextInt(12), 1, 0, 0)
      case _: YearMonthIntervalType => java.time.Period.ofMonths(r.nextInt(2000) - 1000)
      case _: DayTimeIntervalType => java.time.Duration.ofSeconds(r.nextLong() % 100000000L, r.nextInt(1000) * 1000L)
      case d: DecimalType if d.precision == 18 => java.math.BigDecimal.valueOf(r.nextLong() % 1000000000000000000L, 3)
      case CalendarIntervalType => new CalendarInterval(r.nextInt(100), r.nextInt(100), r.nextLong())
      case ArrayType(StringType, _) => Seq.fill(r.nextInt(3))(if (r.nextBoolean()) null else r.nextString(2))
      case NullType => null
      case other => gen.value(other, nullable = false)
    }
  }

  private def rows(seed: Long, n: Int): Seq[Row] = {
    val gen = new RandomTables(seed)
    Seq.fill(n)(Row.fromSeq(schema.fields.map(f => randomValue(gen, f.dataType)).toSeq))
  }

  test("both row-bytes writers write LogicalHash's bytes, from UnsafeRows and other rows, wherever the columns are") {
    val toCatalyst = CatalystTypeConverters.createToCatalystConverter(schema)
    val toUnsafe = UnsafeProjection.create(schema)
    // Arguments are a shuffled subset of the row's columns, so argument positions and row columns differ.
    val gen = new RandomTables(7)
    for (round <- 0 until 20) {
      val arguments = gen.random.shuffle(schema.fields.indices.toList).take(1 + gen.random.nextInt(schema.size))
      val expression = LogicalHash(
        arguments.map(i => BoundReference(i, schema(i).dataType, nullable = true)),
        arguments.map(schema(_).name)
      )
      val spec = RowBytesSpec(expression.schema.row, arguments.toIndexedSeq, DshaV1)
      val writers = Seq(
        "interpreted" -> new InterpretedRowBytesWriter(spec),
        "generated" -> GenerateRowBytesWriter.generate(spec)
      )
      val h = DshaV1.newRowHasher(expression.schema.digest)
      def via(writer: RowBytesWriter, row: InternalRow): Seq[Byte] = {
        h.startRow()
        writer.write(h, row)
        h.finishRow()
        h.digestInto(new Array[Byte](16)).toSeq
      }
      for (row <- rows(round, 40); (name, writer) <- writers) {
        val generic = toCatalyst(row).asInstanceOf[GenericInternalRow]
        val unsafe: UnsafeRow = toUnsafe(generic)
        val expected = expression.eval(generic).asInstanceOf[Array[Byte]].toSeq
        assert(via(writer, unsafe) == expected, s"$name, UnsafeRow, arguments $arguments, row $row")
        assert(via(writer, generic) == expected, s"$name, GenericInternalRow, arguments $arguments, row $row")
      }
    }
  }

  test("only columns read straight from the row make the writer direct") {
    def direct(dt: DataType): Boolean =
      RowBytesWriter.direct(LogicalHash(Seq(BoundReference(0, dt, true)), Seq("c")).schema.row)
    Seq(StringType, BinaryType, BooleanType, ShortType, DoubleType, DateType, DecimalType(18, 0), TimestampNTZType)
      .foreach(dt => assert(direct(dt), dt))
    Seq(DecimalType(19, 0), CalendarIntervalType, ArrayType(IntegerType), NullType, StructType(Seq()))
      .foreach(dt => assert(!direct(dt), dt))
  }

  private def partialSteps(plan: SparkPlan): Seq[PartialDshaExec] = collect(plan) { case p: PartialDshaExec => p }

  private def flat(df: DataFrame): DataFrame =
    df.drop("wide", "ci", "arr", "nothing")

  private def table(seed: Long, n: Int): DataFrame = spark.createDataFrame(rows(seed, n).asJava, schema)

  /**
   * The query's result and whether it hashed row bytes, with the rule on; and the result with it off. With adaptive
   * execution on as well as off (the suite's default), so the rule is seen to apply to query stages too.
   */
  private def onAndOff(query: => DataFrame): (Seq[Row], Boolean, Seq[Row]) = {
    val adaptive = withConf(Map("spark.sql.adaptive.enabled" -> "true"))(onAndOffNow(query))
    val static = onAndOffNow(query)
    assert(adaptive == static, "adaptive execution changes nothing")
    static
  }

  private def onAndOffNow(query: => DataFrame): (Seq[Row], Boolean, Seq[Row]) = {
    val on = withConf(Map(HashRowBytes.Enabled -> "true")) {
      val df = query
      (df.collect().toSeq, partialSteps(df.queryExecution.executedPlan).nonEmpty)
    }
    val off = withConf(Map(HashRowBytes.Enabled -> "false")) {
      val df = query
      assert(partialSteps(df.queryExecution.executedPlan).isEmpty, "the rule is off")
      df.collect().toSeq
    }
    (on._1, on._2, off)
  }

  test("cached tables, shuffles and local data: hashed from row bytes, same digest as the generated aggregate") {
    val cached = flat(table(11, 500)).cache()
    try {
      sameInAllModes {
        val queries: Seq[(String, () => DataFrame)] = Seq(
          "cached" -> (() => cached.selectExpr("dsha(*)")),
          "cached, two digests" -> (() => cached.selectExpr("dsha(s, i64)", "dsha_fingerprint(*).content_sum")),
          "cached, state" -> (() => cached.selectExpr("dsha_state(*)", "dsha(s)")),
          "after a shuffle" -> (() => flat(table(12, 300)).repartition(5).selectExpr("dsha(*)")),
          "cached, nothing selected" -> (() =>
            cached.where("i32 IS NULL AND i64 IS NULL AND s IS NULL").selectExpr("dsha(*)")
          ),
          "local rows" -> (() => spark.sql("SELECT dsha(*) FROM VALUES (1, 'a'), (2, NULL), (NULL, '') AS t(x, y)"))
        )
        queries.map { case (name, query) =>
          val (on, hashedBytes, off) = onAndOff(query())
          assert(on == off, name)
          if (name != "cached, nothing selected") assert(hashedBytes, s"$name: expected PartialDshaExec")
          name -> on
        }
      }
      // A cached empty table still outputs one (zero) buffer per partition.
      val empty = flat(table(13, 0)).cache()
      val (on, hashedBytes, off) = onAndOff(empty.selectExpr("dsha_fingerprint(*).rows", "dsha(*)"))
      assert(hashedBytes && on == off && on.head.getLong(0) == 0L)
      empty.unpersist()
    } finally cached.unpersist()
  }

  test("left to Spark's generated aggregate: GROUP BY, fused inputs, expressions, nested types, other aggregates") {
    val cached = table(21, 200).cache()
    val dir = tempDir().getPath + "/t"
    flat(table(22, 200)).write.parquet(dir)
    try {
      val queries: Seq[(String, () => DataFrame)] = Seq(
        "GROUP BY" -> (() => flat(cached).groupBy("b").agg(org.apache.spark.sql.functions.expr("dsha(*)"))),
        "Parquet scan" -> (() => spark.read.parquet(dir).selectExpr("dsha(*)")),
        "expression argument" -> (() => cached.selectExpr("dsha(i32 + 1)")),
        "nested column" -> (() => cached.selectExpr("dsha(s, arr)")),
        "wide decimal" -> (() => cached.selectExpr("dsha(wide)")),
        "with count(*)" -> (() => cached.selectExpr("dsha(s)", "count(*)")),
        "FILTER" -> (() => cached.selectExpr("dsha(s) FILTER (WHERE b)")),
        "DISTINCT" -> (() => cached.selectExpr("dsha(DISTINCT s)"))
      )
      for ((name, query) <- queries) {
        val (on, hashedBytes, off) = onAndOff(query())
        assert(!hashedBytes, s"$name: expected the generated aggregate")
        assert(on == off, name)
      }
    } finally cached.unpersist()
  }

  test("a setting that is neither true nor false is an error naming it") {
    val e = intercept[IllegalArgumentException] {
      withConf(Map(HashRowBytes.Enabled -> "yes"))(spark.range(3).repartition(2).selectExpr("dsha(*)").collect())
    }
    assert(e.getMessage == "spark.dsha.hashRowBytes must be true or false, not 'yes'", e.getMessage)
  }

  test("EXPLAIN names the step and its arguments; metrics count the rows") {
    val cached = flat(table(31, 100)).cache()
    try {
      val df = cached.selectExpr("dsha(s, i64)")
      df.collect()
      val plan = df.queryExecution.executedPlan
      val line = "PartialDsha [partial_dsha(s, i64)] (hashes row bytes, reads cached batches)"
      assert(plan.toString.contains(line), plan.toString)
      val step = partialSteps(plan).head
      assert(step.metrics("rowsHashed").value == 100L)
      // The cache's scan, whose batches the step reads itself, still counts its rows.
      assert(step.child.metrics("numOutputRows").value == 100L)
      assert(step.metrics("numOutputRows").value == cached.rdd.getNumPartitions.toLong)
    } finally cached.unpersist()
  }
}
