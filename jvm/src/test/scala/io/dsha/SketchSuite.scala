package io.dsha

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types.StructType

import io.dsha.sketch.{Sketch, SketchCells, SketchDecoder}

/**
 * dsha_sketch and dsha_sketch_diff (SPEC.md §17): the decoder against exact multiset differences of random digests,
 * folding against direct computation, and in SQL against exceptAll over random nested tables, in every execution mode.
 */
class SketchSuite extends SparkSuite {

  private type Digest = (Long, Long)

  /** A filter word for a digest (any function of it: the cells only carry it). */
  private def filterOf(d: Digest): Long = (d._1 * 31 + d._2) >>> 32

  private def cellsOf(items: Map[Digest, Long], m: Int): SketchCells = {
    val c = new SketchCells(m)
    items.foreach { case (d @ (lo, hi), n) => c.add(lo, hi, filterOf(d), n) }
    c
  }

  private def filters(r: SketchDecoder.Result): Map[Digest, Long] =
    (0 until r.size).map(k => (r.lo(k), r.hi(k)) -> r.filter(k)).toMap

  private def decoded(r: SketchDecoder.Result): Map[Digest, Long] =
    (0 until r.size).map(k => (r.lo(k), r.hi(k)) -> r.count(k)).toMap

  /** A multiset difference of `d` distinct digests with multiplicities from -3 to 3 (0 excluded). */
  private def randomDifference(random: Random, d: Int): Map[Digest, Long] =
    Seq.fill(d)((random.nextLong(), random.nextLong()) -> ((random.nextInt(3) + 1) * (if (random.nextBoolean()) 1L
                                                                                      else -1L))).toMap

  test("decoding random differences gives exactly the multiset difference, at about 1.25 to 2 cells per digest") {
    val random = new Random(17)
    for (d <- Seq(0, 1, 2, 5, 30, 200, 1000, 20000, 100000)) {
      val diff = randomDifference(random, d)
      val m = Iterator.iterate(1)(_ * 2).map(n => 3 * n).find(_ >= 2 * d + 3).get
      val result = SketchDecoder.decodeSmallest(cellsOf(diff, m))
      assert(result.decoded, s"d=$d, m=$m")
      assert(decoded(result) == diff, s"d=$d")
      assert(result.filtersValid && filters(result) == diff.map { case (x, _) => x -> filterOf(x) }, s"d=$d")
      if (d >= 1000) assert(result.cells <= 2 * d, s"d=$d decoded with ${result.cells} cells")
    }
  }

  test("a difference larger than the sketch fails to decode, and the estimate sizes a retry") {
    val random = new Random(5)
    val diff = randomDifference(random, 5000)
    val failed = SketchDecoder.decodeSmallest(cellsOf(diff, 3072))
    assert(!failed.decoded)
    assert(failed.estimate > 3000 && failed.estimate < 8000, s"estimate ${failed.estimate}")
    val retry = SketchDecoder.decodeSmallest(cellsOf(diff, 12288))
    assert(retry.decoded && decoded(retry) == diff)
  }

  test("cells that add: 3 copies against 1 decode as +2, and multiplicities as large as 2^40 divide back") {
    val x = (0x0123456789abcdefL, -0x1122334455667788L)
    val y = (42L, 7L)
    val a = cellsOf(Map(x -> 3L, y -> (1L << 40)), 12)
    val b = cellsOf(Map(x -> 1L), 12)
    a.combine(b, -1)
    val r = SketchDecoder.decodeSmallest(a)
    assert(r.decoded && decoded(r) == Map(x -> 2L, y -> (1L << 40)))
    // A row 2^31 times or more has no filter word (SPEC.md §17.4: C·φ could wrap around); 2^20 times, it has.
    assert(!r.filtersValid)
    val small = cellsOf(Map(x -> 2L, y -> (1L << 20)), 12)
    val s = SketchDecoder.decodeSmallest(small)
    assert(s.decoded && s.filtersValid && filters(s) == Map(x -> filterOf(x), y -> filterOf(y)))
    // A filter sum that does not divide (another implementation's words, a corrupted sketch): the same digests,
    // the filter words not valid.
    small.words(5) += 1
    val broken = SketchDecoder.decodeSmallest(small)
    assert(broken.decoded && decoded(broken) == decoded(s) && !broken.filtersValid)
  }

  test("a word's cell is its unsigned remainder by the cell count, for every allowed size and others") {
    val random = new Random(7)
    val sizes = (0 to 24).flatMap(i => Seq(1 << i, 3 << i)).filter(_ <= Sketch.MaxCells) ++ Seq(5, 7, 1000)
    for (m <- sizes) {
      val cells = new SketchCells(m)
      for (r <- Seq.fill(200)(random.nextLong()) ++ Seq(-1L, 0L, Long.MaxValue, Long.MinValue)) {
        assert(cells.cellOf(r) == java.lang.Long.remainderUnsigned(r, m.toLong), s"$r mod $m")
      }
    }
  }

  test("rows added a batch at a time give the cells of rows added one by one") {
    val random = new Random(11)
    for (m <- Seq(1, 2, 3, 5, 48, 49152); n <- Seq(0, 1, 255, 256, 257, 1000)) {
      val digests = Seq.fill(n)((random.nextLong(), random.nextLong()))
      val oneByOne = new SketchCells(m)
      digests.foreach { case d @ (lo, hi) => oneByOne.add(lo, hi, filterOf(d), 1L) }
      val batched = new SketchCells(m)
      batched.addAll(digests.map(_._1).toArray, digests.map(_._2).toArray, digests.map(filterOf).toArray, n)
      assert(batched.words.sameElements(oneByOne.words), s"m=$m, n=$n")
      val sketch = Sketch.empty("s", new Array[Byte](32), m, IndexedSeq.empty)
      digests.foreach { case d @ (lo, hi) => sketch.addRow(lo, hi, filterOf(d)) }
      assert(sketch.cells.words.sameElements(oneByOne.words) && sketch.rows == n, s"Sketch: m=$m, n=$n")
    }
  }

  test("a sketch folds into exactly the sketch of a divisor size") {
    val random = new Random(3)
    val items = randomDifference(random, 300)
    for ((big, small) <- Seq(48 -> 12, 48 -> 16, 48 -> 3, 3072 -> 96, 4096 -> 1)) {
      assert(cellsOf(items, big).fold(small).words.sameElements(cellsOf(items, small).words), s"$big -> $small")
    }
    assert(SketchDecoder.foldSizes(48).toSeq == Seq(1, 2, 3, 4, 6, 8, 12, 16, 24, 48))
    assert(Seq(1, 2, 3, 6, 49152, 65536).forall(n => SketchCells.validSize(n.toLong)))
    assert(Seq(0, 5, 9, 10, 40).forall(n => !SketchCells.validSize(n.toLong)))
  }

  private def table(schema: StructType, rows: Seq[Row]): DataFrame = spark.createDataFrame(rows.asJava, schema)

  private def sketchDiff(left: DataFrame, right: DataFrame): Row = {
    left.createOrReplaceTempView("sketch_left")
    right.createOrReplaceTempView("sketch_right")
    spark.sql(
      """SELECT dsha_sketch_diff(l.s, r.s) AS d
        |FROM (SELECT dsha_sketch(*) AS s FROM sketch_left) l, (SELECT dsha_sketch(*) AS s FROM sketch_right) r""".stripMargin
    ).head().getStruct(0)
  }

  /** The reference: left − right by row digest, from exceptAll both ways (maps compared by their digests). */
  private def exceptAllDifference(left: DataFrame, right: DataFrame): Map[Seq[Byte], Long] = {
    val l = left.selectExpr("logical_hash(*) AS h")
    val r = right.selectExpr("logical_hash(*) AS h")
    def counts(df: DataFrame): Map[Seq[Byte], Long] =
      df.collect().map(_.getAs[Array[Byte]](0).toSeq).groupBy(identity).map { case (k, v) => k -> v.length.toLong }
    counts(l.exceptAll(r)) ++ counts(r.exceptAll(l)).map { case (k, v) => k -> -v }
  }

  private def hexOf(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02X").mkString

  private def entries(d: Row): Map[Seq[Byte], Long] =
    d.getSeq[Row](d.fieldIndex("entries")).map(e => e.getAs[Array[Byte]](0).toSeq -> e.getLong(1)).toMap

  for (seed <- SparkSuite.randomTableSeeds(6)) {
    test(s"dsha_sketch_diff equals exceptAll both ways on random nested tables, every mode, #$seed") {
      val gen = new RandomTables(seed)
      val schema = gen.structType(2 + gen.random.nextInt(3), depth = 2)
      val rows = gen.rows(schema, 60)
      // Right: some rows deleted, some modified, some inserted, some duplicated.
      val k = seed * 3
      val kept = rows.drop(k)
      val modified = rows.take(k / 2).map(r => Row.fromSeq(r.toSeq.updated(0, gen.value(schema(0).dataType))))
      val right = kept ++ modified ++ gen.rows(schema, k / 3) ++ rows.slice(k, k + 2) ++ rows.slice(k, k + 1)
      val (l, r) = (table(schema, rows), table(schema, right).repartition(3))
      val expected = exceptAllDifference(l, r)
      val d = sameInAllModes {
        withConf(Map(Sketch.CellsSetting -> "96")) {
          val d = sketchDiff(l, r)
          (d.getBoolean(0), entries(d), d.getAs[String]("left_digest"), d.getAs[String]("right_digest"))
        }
      }
      assert(d._1, "decoded")
      assert(d._2 == expected)
      assert(d._3 == digestOf(l) && d._4 == digestOf(r))
    }
  }

  test("a sketch does not depend on partitioning; its columns are dsha(column); its layout parses back") {
    val df = spark.range(500).selectExpr("id", "CAST(id % 7 AS STRING) AS s", "map('k', id) AS m")
    val bytes = sameInAllModes {
      withConf(Map(Sketch.CellsSetting -> "24")) {
        val a = df.repartition(5).selectExpr("dsha_sketch(*)").head().getAs[Array[Byte]](0)
        val b = df.coalesce(1).selectExpr("dsha_sketch(*)").head().getAs[Array[Byte]](0)
        assert(a.sameElements(b))
        a.toSeq
      }
    }
    val sketch = Sketch.parse(bytes.toArray)
    assert(sketch.rows == 500 && sketch.cellCount == 24)
    assert(sketch.toBytes.sameElements(bytes))
    assert(sketch.digest == digestOf(df))
    assert(sketch.columns.map(_.name) == Seq("id", "m", "s"))
    for ((c, i) <- sketch.columns.zipWithIndex) {
      assert(sketch.columnDigest(i) == digestOf(df.select(c.name)), c.name)
    }
    withConf(Map(Sketch.ColumnsSetting -> "false")) {
      val plain = Sketch.parse(df.selectExpr("dsha_sketch(*)").head().getAs[Array[Byte]](0))
      assert(plain.columns.isEmpty && plain.digest == sketch.digest)
    }
  }

  test("sketches of different sizes compare on their common fold; identical tables decode to nothing at 1 cell") {
    val df = spark.range(300).selectExpr("id", "id * 2 AS y")
    val sketch = (n: Int) =>
      withConf(Map(Sketch.CellsSetting -> n.toString))(df.selectExpr("dsha_sketch(*)").head().getAs[Array[Byte]](0))
    val (a, b) = (Sketch.parse(sketch(48)), Sketch.parse(sketch(64)))
    val diff = a.minus(b)
    assert(diff.cells == 16)
    val r = SketchDecoder.decodeSmallest(diff)
    assert(r.decoded && r.size == 0 && r.cells == 1)
  }

  for (seed <- SparkSuite.randomTableSeeds(3).map(_ + 10)) {
    test(s"logical_hash_in keeps exactly the rows whose logical_hash is listed, every mode, #$seed") {
      val gen = new RandomTables(seed)
      val schema = gen.structType(2 + gen.random.nextInt(3), depth = 2)
      val df = table(schema, gen.rows(schema, 80) ++ gen.rows(schema, 5).flatMap(r => Seq(r, r))).repartition(3)
      val all = df.selectExpr("logical_hash(*) AS h").collect().map(_.getAs[Array[Byte]](0).toSeq)
      val picked = gen.random.shuffle(all.distinct.toList).take(17) :+ Seq.fill[Byte](16)(0) // and a digest not there
      val expected = all.filter(picked.toSet).groupBy(identity).map { case (k, v) => k -> v.length }
      val literal = picked.map(d => hexOf(d.toArray)).mkString("X'", "", "'")
      df.createOrReplaceTempView("hash_in")
      val columns = df.columns.map(c => s"`$c`").mkString(", ")
      val got = sameInAllModes {
        spark
          .sql(s"SELECT logical_hash(*) FROM hash_in WHERE logical_hash_in($literal, $columns)")
          .collect()
          .map(_.getAs[Array[Byte]](0).toSeq)
          .groupBy(identity)
          .map { case (k, v) => k -> v.length }
      }
      assert(got == expected && got.nonEmpty)
      // Arguments by name, as logical_hash: the columns in another order find the same rows.
      val reversed = df.columns.reverse.map(c => s"`$c`").mkString(", ")
      assert(
        spark.sql(s"SELECT * FROM hash_in WHERE logical_hash_in($literal, $reversed)").count() == expected.values.sum
      )
      // `*` and `t.*` in a WHERE clause, on every Spark line (Spark 3.5 expands neither itself: StarInFilter).
      val starred = spark.sql(
        s"SELECT logical_hash(*) FROM hash_in t WHERE logical_hash_in($literal, *) AND logical_hash(t.*) IS NOT NULL"
      )
      assert(starred.collect().map(_.getAs[Array[Byte]](0).toSeq).groupBy(identity).map { case (k, v) =>
        k -> v.length
      } == expected)
      // Other functions keep Spark's own rule (3.5: no star in a filter).
      if (!SparkSuite.atLeast(spark.version, "4.0")) {
        val e = intercept[Exception](spark.sql("SELECT * FROM hash_in WHERE size(array(*)) > 0").collect())
        assert(e.getMessage.contains("INVALID_USAGE_OF_STAR_OR_REGEX"), e.getMessage)
      }
    }
  }

  test("flat rows that exist (a cached table): sketch and logical_hash_in read row bytes, with the same results") {
    val df = spark
      .range(2000)
      .selectExpr("id", "CAST(id % 13 AS DECIMAL(9, 2)) AS p", "IF(id % 7 = 0, NULL, CONCAT('s', id % 50)) AS s")
      .repartition(4)
      .cache()
    val digests = df.selectExpr("logical_hash(*)").collect().map(_.getAs[Array[Byte]](0)).filter(_(0) < -100)
    val hex = digests.map(hexOf).mkString
    df.createOrReplaceTempView("flat_rows")
    def sketch = spark.sql("SELECT dsha_sketch(*) FROM flat_rows")
    def filtered = spark.sql(s"SELECT logical_hash(*) FROM flat_rows WHERE logical_hash_in(X'$hex', id, p, s)")
    for ((mode, plans) <- inAllModes((sketch.queryExecution.executedPlan, filtered.queryExecution.executedPlan))) {
      val rowBytes = mode.startsWith("HASH_ROW_BYTES")
      assert(plans._1.toString.contains("PartialSketch") == rowBytes, s"$mode\n${plans._1}")
      assert(plans._2.toString.contains("DigestFilter") == rowBytes, s"$mode\n${plans._2}")
    }
    val (bytes, rows) = sameInAllModes {
      withConf(Map(Sketch.CellsSetting -> "48")) {
        val b = sketch.head().getAs[Array[Byte]](0).toSeq
        val r = filtered.collect().map(r => hexOf(r.getAs[Array[Byte]](0))).sorted.toSeq
        (b, r)
      }
    }
    assert(rows == digests.map(hexOf).sorted.toSeq && rows.nonEmpty)
    val parsed = Sketch.parse(bytes.toArray)
    assert(parsed.rows == 2000 && parsed.digest == digestOf(df))
    for ((c, i) <- parsed.columns.zipWithIndex) assert(parsed.columnDigest(i) == digestOf(df.select(c.name)), c.name)
    df.unpersist()
  }

  test(
    "filter words: a sketch's words let logical_filter_word_in prefilter the rows logical_hash_in keeps, every mode"
  ) {
    val df = spark
      .range(3000)
      .selectExpr(
        "id",
        "CAST(id % 13 AS DECIMAL(9, 2)) AS p",
        "IF(id % 7 = 0, NULL, CONCAT('s', id % 50)) AS s",
        "IF(id % 11 = 0, CAST('NaN' AS DOUBLE), IF(id % 5 = 0, -0.0D, id / 3.0D)) AS d",
        "id % 3 = 0 AS b",
        "DATE_ADD(DATE'2020-01-01', CAST(id % 400 AS INT)) AS dt",
        "CAST(id % 120 AS TINYINT) AS t"
      )
      .repartition(4)
      .cache()
    df.createOrReplaceTempView("filter_rows")
    val cols = "id, p, s, d, b, dt, t"
    // The rows' filter words, as a difference against the empty table decodes them.
    val decoded = withConf(Map(Sketch.CellsSetting -> "12288")) {
      spark
        .sql("""SELECT dsha_sketch_diff((SELECT dsha_sketch(*) FROM filter_rows),
               |  (SELECT dsha_sketch(*) FROM filter_rows WHERE false)) AS d""".stripMargin)
        .head()
        .getStruct(0)
    }
    assert(decoded.getAs[Boolean]("filters_valid"))
    val entries = decoded.getSeq[Row](decoded.fieldIndex("entries"))
    assert(entries.size == 3000 && entries.forall(e => !e.isNullAt(2)))
    val wanted = entries.filter(e => e.getAs[Array[Byte]](0)(0) < -100)
    val hex = wanted.map(e => hexOf(e.getAs[Array[Byte]](0))).mkString
    val words = wanted.map { e =>
      val w = e.getLong(2)
      f"${w & 0xff}%02X${(w >>> 8) & 0xff}%02X${(w >>> 16) & 0xff}%02X${(w >>> 24) & 0xff}%02X"
    }.mkString
    def both =
      spark.sql(s"SELECT logical_hash(*) FROM filter_rows WHERE logical_filter_word_in(X'$words', $cols) AND " +
        s"logical_hash_in(X'$hex', $cols)")
    def wordsOnly = spark.sql(s"SELECT logical_hash(*) FROM filter_rows WHERE logical_filter_word_in(X'$words', $cols)")
    for ((mode, plan) <- inAllModes(both.queryExecution.executedPlan.toString)) {
      assert(plan.contains("DigestFilter logical_filter_word_in") == mode.startsWith("HASH_ROW_BYTES"), s"$mode\n$plan")
    }
    val (kept, passed) = sameInAllModes {
      (both.collect().map(r => hexOf(r.getAs[Array[Byte]](0))).sorted.toSeq, wordsOnly.count())
    }
    assert(kept == wanted.map(e => hexOf(e.getAs[Array[Byte]](0))).sorted && kept.nonEmpty)
    // The words alone let through the wanted rows and hardly any other (32-bit words).
    assert(passed >= wanted.size && passed <= wanted.size + 2, s"$passed rows for ${wanted.size} words")
    df.unpersist()
  }

  test("version 1 sketches (no filter words) are read; merged with version 2 they are written as version 1") {
    val v2 = spark.range(10).selectExpr("dsha_sketch(*)").head().getAs[Array[Byte]](0)
    assert(v2(4) == 2)
    val parsed = Sketch.parse(v2)
    val v1 = {
      val b = java.nio.ByteBuffer.wrap(v2).order(java.nio.ByteOrder.LITTLE_ENDIAN)
      val head = 4 + 1 + 4 + 4 + 32 + 8 + 16 + 4 // magic, version, algorithm varint, digest, rows, sum, m
      val m = b.getInt(head - 4)
      val out = new java.io.ByteArrayOutputStream()
      out.write(v2, 0, head)
      for (i <- 0 until m) out.write(v2, head + 48 * i, 40)
      out.write(v2, head + 48 * m, v2.length - head - 48 * m)
      val bytes = out.toByteArray
      bytes(4) = 1
      bytes
    }
    val read = Sketch.parse(v1)
    assert(!read.hasFilters && read.rows == 10 && read.toBytes.sameElements(v1))
    assert(read.cells.words.grouped(6).forall(_(5) == 0))
    assert(parsed.hasFilters && parsed.toBytes.sameElements(v2))
    val merged = Sketch.parse(v2).merge(Sketch.parse(v1))
    assert(!merged.hasFilters && merged.toBytes(4) == 1 && merged.rows == 20)
    val r = SketchDecoder.decodeSmallest(Sketch.parse(v2).minus(read))
    assert(r.decoded && r.size == 0)
  }

  test("logical_hash_in: plans show how many digests, not which; bad digests are errors that say why") {
    val df = spark.range(10).selectExpr("id")
    val digests = df.selectExpr("logical_hash(id)").collect().take(3).map(_.getAs[Array[Byte]](0))
    val hex = digests.map(hexOf).mkString
    val q = spark.sql(s"SELECT * FROM range(10) WHERE logical_hash_in(X'$hex', id)")
    assert(q.count() == 3)
    val plan = q.queryExecution.executedPlan.toString + q.queryExecution.analyzed.toString
    assert(plan.contains("<3 digests>") && !plan.toUpperCase.contains(hex.take(32)), plan)
    val partial = intercept[Exception](spark.sql("SELECT logical_hash_in(X'0011', 1)").collect())
    assert(partial.getMessage.contains("16 bytes each") && partial.getMessage.contains("2 bytes"), partial.getMessage)
    val perRow = intercept[Exception](spark.sql("SELECT logical_hash_in(logical_hash(id), id) FROM range(3)").collect())
    assert(perRow.getMessage.contains("constant BINARY"), perRow.getMessage)
    val noColumns = intercept[Exception](spark.sql(s"SELECT logical_hash_in(X'$hex')").collect())
    assert(noColumns.getMessage.contains("then the columns"), noColumns.getMessage)
    // logical_filter_word_in alike: words show as their number; bad words are errors that name the function.
    val words = spark.sql("SELECT * FROM range(10) WHERE logical_filter_word_in(X'0102030405060708', id)")
    assert(words.queryExecution.executedPlan.toString.contains("<2 filter words>"))
    val oddWords = intercept[Exception](spark.sql("SELECT logical_filter_word_in(X'001122', 1)").collect())
    assert(oddWords.getMessage.contains("4 bytes each") && oddWords.getMessage.contains("3 bytes"), oddWords.getMessage)
    val wordsPerRow =
      intercept[Exception](spark.sql("SELECT logical_filter_word_in(logical_hash(id), id) FROM range(3)").collect())
    assert(
      wordsPerRow.getMessage.contains("logical_filter_word_in takes the filter words first"),
      wordsPerRow.getMessage
    )
  }

  test("errors name the setting, the schemas, or what is malformed") {
    val bad = intercept[Exception] {
      withConf(Map(Sketch.CellsSetting -> "1000"))(spark.range(3).selectExpr("dsha_sketch(*)").collect())
    }
    assert(bad.getMessage.contains(Sketch.CellsSetting) && bad.getMessage.contains("1000"))
    val schemas = intercept[Exception] {
      spark.sql(
        "SELECT dsha_sketch_diff((SELECT dsha_sketch(*) FROM range(3)), (SELECT dsha_sketch(x) FROM (SELECT id AS x FROM range(3))))"
      )
        .collect()
    }
    assert(schemas.getMessage.contains("different schemas"), schemas.getMessage)
    assert(schemas.getMessage.contains("\"id\"") && schemas.getMessage.contains("\"x\""), schemas.getMessage)
    val malformed = intercept[Exception](spark.sql("SELECT dsha_sketch_diff(X'00', X'00')").collect())
    assert(malformed.getMessage.contains("malformed dsha sketch"), malformed.getMessage)
    val types = intercept[Exception](spark.sql("SELECT dsha_sketch_diff(1, 2)").collect())
    assert(types.getMessage.contains("dsha_sketch_diff takes two BINARY dsha sketches"), types.getMessage)
  }
}
