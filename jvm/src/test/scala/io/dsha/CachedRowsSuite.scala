package io.dsha

import java.nio.{ByteBuffer, ByteOrder}

import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeRow
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.AdaptiveSparkPlanHelper
import org.apache.spark.sql.execution.columnar.{DefaultCachedBatch, InMemoryTableScanExec}

import io.dsha.cache.CachedColumn
import io.dsha.execution.CachedRows

/**
 * dsha's decoder of Spark's in-memory cache (`CachedRows`, `cache/CachedColumn`) against Spark's own reader: the same
 * rows byte for byte, for every flat type, with nulls, in every encoding Spark's cache writes; and the digests, sketches
 * and digest filters of the row-bytes steps the same with it as without it.
 */
class CachedRowsSuite extends SparkSuite with AdaptiveSparkPlanHelper {

  /** Columns of every flat type, each shaped so that Spark's cache picks a different encoding, most with nulls. */
  private val columns: Seq[(String, String)] = Seq(
    "bool_bits" -> "hash(id, 1) % 2 = 0",
    "bool_runs" -> "id < 2000",
    "byte_plain" -> "CAST(hash(id, 2) % 128 AS TINYINT)",
    "byte_runs" -> "CAST(id DIV 100 AS TINYINT)",
    "short_plain" -> "CAST(hash(id, 3) % 32768 AS SMALLINT)",
    "short_runs" -> "CAST(id DIV 100 AS SMALLINT)",
    "int_delta" -> "CAST(id AS INT) + IF(id % 50 = 0, 1000000, 0)",
    "int_plain" -> "hash(id, 4)",
    "int_dictionary" -> "CAST(hash(id, 5) % 5 AS INT) * 1000000",
    "int_runs" -> "CAST(id DIV 100 AS INT) * 1000000",
    "long_delta" -> "id * 3 - IF(id % 40 = 0, 1000000000000, 0)",
    "long_plain" -> "xxhash64(id)",
    "long_dictionary" -> "xxhash64(id % 5)",
    "long_runs" -> "(id DIV 100) * 1000000000000",
    "float" -> ("CASE id % 97 WHEN 0 THEN CAST('NaN' AS FLOAT) WHEN 1 THEN CAST(-0.0 AS FLOAT) " +
      "WHEN 2 THEN CAST('-Infinity' AS FLOAT) ELSE CAST(hash(id, 6) / 7 AS FLOAT) END"),
    "double" -> ("CASE id % 89 WHEN 0 THEN CAST('NaN' AS DOUBLE) WHEN 1 THEN -0.0D " +
      "WHEN 2 THEN CAST('Infinity' AS DOUBLE) ELSE CAST(xxhash64(id, 7) AS DOUBLE) / 3 END"),
    "str_plain" -> ("CASE id % 13 WHEN 0 THEN '' WHEN 1 THEN 'é漢字🙂' WHEN 2 THEN repeat('x', CAST(id % 300 AS INT)) " +
      "ELSE CAST(hash(id, 8) AS STRING) END"),
    "str_dictionary" -> "concat('v', hash(id, 9) % 5)",
    "str_runs" -> "concat('run ', id DIV 100)",
    "bin" -> "IF(id % 11 = 0, X'', CAST(concat('b', xxhash64(id)) AS BINARY))",
    "dec_compact" -> "CAST(hash(id, 10) % 100000000 / 100 AS DECIMAL(10, 2))",
    // Every third value small (1 to 4 bytes): Spark's reader copies the bytes into a slot of 8, a null gets 16.
    "dec_wide" -> ("IF(id % 3 = 0, CAST((id % 2000) - 1000 AS DECIMAL(30, 5)), " +
      "CAST(CAST(xxhash64(id) AS DECIMAL(25, 0)) * 1000 AS DECIMAL(30, 5)))"),
    "date" -> "date_add(DATE'2000-01-01', CAST(id % 1000 AS INT))",
    "ts" -> "timestamp_seconds(id * 1000 + hash(id, 11) % 1000)",
    "ts_ntz" -> "CAST(timestamp_seconds(id) AS TIMESTAMP_NTZ)",
    "ym" -> "make_ym_interval(CAST(id % 20 AS INT), 0)",
    "dt" -> "make_dt_interval(CAST(id % 3 AS INT), 0, 0, 0)"
  )

  /** The columns, then a copy of each with nulls (at a rate of its own), then columns of nulls only. */
  private def table(n: Int): DataFrame = {
    val nullable = columns.zipWithIndex.map { case ((name, e), i) =>
      s"IF(hash(id, ${100 + i}) % ${2 + i % 9} = 0, NULL, $e) AS ${name}_n"
    }
    val nulls = Seq(
      "CAST(NULL AS STRING) AS null_str",
      "CAST(NULL AS DECIMAL(30, 5)) AS null_wide",
      "CAST(NULL AS INT) AS null_int"
    )
    spark.range(0, n, 1, 3).selectExpr(columns.map { case (name, e) => s"$e AS $name" } ++ nullable ++ nulls: _*)
  }

  /** [[table]] without its wide decimals, which dsha's row-bytes steps leave to Spark's aggregate. */
  private def flatTable(n: Int): DataFrame = table(n).drop("dec_wide", "dec_wide_n", "null_wide")

  /** A row's values, binary as bytes (an array prints as its identity). */
  private def values(r: org.apache.spark.sql.Row): Seq[Any] = r.toSeq.map {
    case b: Array[Byte] => b.toSeq
    case other => other
  }

  /** `df` cached in small batches (many per partition, the last one partial), and materialised. */
  private def cached(df: DataFrame): DataFrame =
    withConf(Map("spark.sql.inMemoryColumnarStorage.batchSize" -> "257")) {
      val c = df.cache()
      c.count()
      c
    }

  private def scanOf(df: DataFrame): InMemoryTableScanExec =
    collect(df.queryExecution.executedPlan) { case s: InMemoryTableScanExec => s }.head

  private def bytes(rows: Array[InternalRow]): Seq[Seq[Byte]] = rows.toSeq.map(_.asInstanceOf[UnsafeRow].getBytes.toSeq)

  private def sparkRows(scan: SparkPlan): Seq[Seq[Byte]] = bytes(scan.execute().map(_.copy()).collect())

  private def dshaRows(scan: SparkPlan): Seq[Seq[Byte]] = {
    val rows = CachedRows.of(scan)
    assert(rows.isDefined, s"dsha reads ${scan.simpleString(5)}")
    bytes(rows.get.execute().map(_.copy()).collect())
  }

  test("rows decoded from cached batches are Spark's rows, byte for byte: every flat type, every encoding, nulls") {
    val df = cached(table(3000))
    try {
      val scan = scanOf(df)
      val theirs = sparkRows(scan)
      assert(theirs.size == 3000)
      assert(dshaRows(scan) == theirs)
      // Every encoding of Spark's cache was decoded: pass-through, runs, dictionary, bit set, int and long deltas.
      val compressible = scan.output.zipWithIndex.filterNot { case (a, _) =>
        a.name.startsWith("bin") || a.name.startsWith("dec_wide") || a.name == "null_wide"
      }.map(_._2)
      val schemes = scan.baseCacheRDD().flatMap { b =>
        val buffers = b.asInstanceOf[DefaultCachedBatch].buffers
        compressible.map(i => CachedColumn.schemeOf(buffers(i)))
      }.collect().toSet
      assert(schemes == Set(0, 1, 2, 3, 4, 5), schemes)
      // A subset of the columns, in another order (the scan's own projection of the cached batches).
      val some = df.select("str_runs_n", "bool_bits", "dec_wide_n", "long_delta")
      val subset = scanOf(some)
      assert(subset.output.map(_.name) == Seq("str_runs_n", "bool_bits", "dec_wide_n", "long_delta"))
      assert(dshaRows(subset) == sparkRows(subset))
    } finally df.unpersist()
  }

  test("TIME columns (Spark 4.1+) decoded from cached batches are Spark's rows, byte for byte") {
    assume(SparkSuite.atLeast(spark.version, "4.1"), "TIME needs Spark 4.1")
    withConf(Map("spark.sql.timeType.enabled" -> "true")) {
      val df = cached(
        spark.range(0, 2000, 1, 2).selectExpr(
          "id",
          "make_time(CAST(id % 24 AS INT), CAST(id % 60 AS INT), CAST(id % 60 AS DECIMAL(16, 6)) + id / 1000000) AS t",
          "IF(id % 7 = 0, NULL, make_time(CAST(id % 3 AS INT), 0, 0)) AS t_n"
        )
      )
      try {
        val scan = scanOf(df)
        assert(scan.output.map(_.dataType.typeName).count(_.startsWith("time")) == 2, scan.output)
        val theirs = sparkRows(scan)
        assert(theirs.size == 2000 && dshaRows(scan) == theirs)
        val digests = withConf(Map("spark.dsha.hashRowBytes" -> "true")) {
          Seq("true", "false").map(on =>
            withConf(Map(CachedRows.Enabled -> on))(df.selectExpr("dsha(*)").head().get(0))
          )
        }
        assert(digests.distinct.size == 1, digests)
      } finally df.unpersist()
    }
  }

  test("digests, sketches and digest filters are the same read from cached batches as read by Spark, in every mode") {
    val df = cached(flatTable(1500))
    val whole = cached(table(1500))
    val names = df.columns.toSeq
    try {
      val digests = df.where("long_delta IN (3, 6, 9)").selectExpr("hex(logical_hash(*))").collect().map(_.getString(0))
      assert(digests.length == 3)
      def results(readCache: String): Seq[Any] = withConf(Map(CachedRows.Enabled -> readCache)) {
        sameInAllModes {
          val states = df.selectExpr("dsha(*)", "hex(dsha_state(*))", "hex(dsha_sketch(*))").collect().head.toSeq
          // Picked by their digests, with the wide decimal (which the filter passes through, not hashes).
          val picked = whole.where(s"logical_hash_in(X'${digests.mkString}', ${names.mkString(", ")})")
          states :+ picked.collect().map(values).sortBy(_.toString).toSeq
        }
      }
      val on = results("true")
      assert(on == results("false"))
      assert(on.last.asInstanceOf[Seq[_]].size == 3, "the three rows, picked by their digests")
    } finally {
      df.unpersist()
      whole.unpersist()
    }
  }

  test("EXPLAIN says which steps read cached batches; not with the setting off, nested columns or uncached input") {
    val df = cached(flatTable(300))
    val nested = cached(spark.range(0, 100, 1, 2).selectExpr("id", "array(id) AS a"))
    try {
      def plan(query: DataFrame): String = {
        query.collect()
        query.queryExecution.executedPlan.toString
      }
      withConf(Map("spark.dsha.hashRowBytes" -> "true")) {
        for (adaptive <- Seq("true", "false")) withConf(Map("spark.sql.adaptive.enabled" -> adaptive)) {
          assert(plan(df.selectExpr("dsha(*)")).contains("(hashes row bytes, reads cached batches)"), adaptive)
          assert(plan(df.selectExpr("dsha_sketch(*)")).contains("(hashes row bytes, reads cached batches)"), adaptive)
          assert(
            plan(df.where(s"logical_hash_in(X'00000000000000000000000000000000', ${df.columns.mkString(", ")})"))
              .contains("(hashes row bytes, reads cached batches)"),
            adaptive
          )
          val off = withConf(Map(CachedRows.Enabled -> "false"))(plan(df.selectExpr("dsha(*)")))
          assert(off.contains("(hashes row bytes)") && !off.contains("reads cached batches"), off)
          // The filter outputs the array column, which dsha does not decode (dsha(id) alone reads only id).
          assert(plan(nested.selectExpr("dsha(id)")).contains("reads cached batches"))
          val picked = nested.where("logical_hash_in(X'00000000000000000000000000000000', id)")
          assert(!plan(picked).contains("reads cached batches") && plan(picked).contains("DigestFilter"))
          assert(!plan(spark.range(10).repartition(2).selectExpr("dsha(*)")).contains("reads cached batches"))
        }
      }
      val e = intercept[IllegalArgumentException] {
        withConf(Map("spark.dsha.hashRowBytes" -> "true", CachedRows.Enabled -> "yes"))(
          df.selectExpr("dsha(*)").collect()
        )
      }
      assert(e.getMessage == "spark.dsha.readCachedBatches must be true or false, not 'yes'", e.getMessage)
    } finally {
      df.unpersist()
      nested.unpersist()
    }
  }

  test("a batch whose encoding dsha does not know is read by Spark's reader, the rows unchanged") {
    val df = cached(table(2000))
    try {
      val scan = scanOf(df)
      val types = CachedRows.of(scan).get.columns
      val indexes = scan.output.map(a => scan.relation.output.indexWhere(_.exprId == a.exprId)).toArray
      val metric = scan.longMetric("numOutputRows")
      // Every other batch declined, as one with an unknown encoding is.
      val mixed = scan.baseCacheRDD().mapPartitions { batches =>
        var n = 0
        val rows = new CachedRows.Rows(batches, types, indexes, metric) {
          override protected def decode(batch: DefaultCachedBatch): Boolean = {
            n += 1
            n % 2 == 0 && super.decode(batch)
          }
        }
        rows.map(_.copy()) ++ Iterator.single(rows.decoded -> n)
      }.collect()
      val (counts, read) = mixed.partition(_.isInstanceOf[(_, _)])
      assert(bytes(read.map(_.asInstanceOf[InternalRow])) == sparkRows(scan))
      val (decoded, seen) = counts.map(_.asInstanceOf[(Int, Int)]).unzip
      assert(decoded.sum == seen.map(_ / 2).sum && seen.sum == df.rdd.getNumPartitions * 3, (decoded, seen))
      // Batches of more values than the budget: Spark's reader (57 columns: 14,649 values in 257 rows, 8,664 in 152).
      val budget = (limit: Long) =>
        scan.baseCacheRDD().mapPartitions { batches =>
          val rows = new CachedRows.Rows(batches, types, indexes, metric, limit)
          rows.map(_.copy()) ++ Iterator.single(rows.decoded)
        }.collect().partition(_.isInstanceOf[Int])
      val (none, over) = budget(8000)
      assert(none.map(_.asInstanceOf[Int]).sum == 0 && bytes(over.map(_.asInstanceOf[InternalRow])) == sparkRows(scan))
      val (all, within) = budget(14649)
      assert(
        all.map(_.asInstanceOf[Int]).sum == 3 * 3 && bytes(within.map(_.asInstanceOf[InternalRow])) == sparkRows(scan)
      )
    } finally df.unpersist()
  }

  test("a column decoder declines encodings it does not know and rejects bytes that end early") {
    def column(nulls: Seq[Int], scheme: Int, values: Array[Byte]): Array[Byte] = {
      val b = ByteBuffer.allocate(8 + 4 * nulls.size + values.length).order(ByteOrder.nativeOrder())
      b.putInt(nulls.size)
      nulls.foreach(b.putInt)
      b.putInt(scheme).put(values)
      b.array()
    }
    val ints = new CachedColumn(CachedColumn.INT, 0, 0)
    val three = ByteBuffer.allocate(12).order(ByteOrder.nativeOrder()).putInt(7).putInt(-1).putInt(9).array()
    assert(ints.load(column(Seq(1), 0, three), 4) && ints.count() == 3)
    assert(!ints.load(column(Nil, 9, three), 3), "scheme 9 is unknown")
    assert(!ints.load(column(Nil, 3, three), 3), "a bit set is only written for booleans")
    assert(!new CachedColumn(CachedColumn.DOUBLE, 0, 0).load(column(Nil, 1, three), 1), "doubles have no runs")
    val e = intercept[IndexOutOfBoundsException](ints.load(column(Nil, 0, three), 4))
    assert(e != null)
    val runs = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putInt(5).putInt(7).array() // 7 fives
    val r = intercept[IllegalStateException](ints.load(column(Nil, 1, runs), 3))
    assert(r.getMessage.contains("a run of 7 values"), r.getMessage)
  }
}
