package io.dsha

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{AnalysisException, DataFrame, Row}
import org.apache.spark.sql.types.{BinaryType, StructField, StructType}

import io.dsha.aggregate.DigestState
import io.dsha.algorithm.{Algorithm, DshaV1}
import io.dsha.util.Bytes

/**
 * Mergeable states (SPEC.md §11): dsha_state, dsha_merge, dsha_final, dsha_final_fingerprint. Merging the states of
 * any split of a table gives exactly the digest and fingerprint of the whole; states of different digests do not
 * merge; malformed states are errors that say what is wrong.
 */
class DigestStateSuite extends SparkSuite {

  private val StateSchema = StructType(Seq(StructField("s", BinaryType)))

  private def table(schema: StructType, rows: Seq[Row]): DataFrame = spark.createDataFrame(rows.asJava, schema)

  private def states(states: Seq[Array[Byte]]): DataFrame = table(StateSchema, states.map(Row(_)))

  private def stateOf(df: DataFrame): Array[Byte] =
    df.repartition(2).selectExpr("dsha_state(*)").collect().head.getAs[Array[Byte]](0)

  /** dsha(*) and dsha_fingerprint(*) of the whole table, computed directly. */
  private def whole(df: DataFrame): Row = df.repartition(3).selectExpr("dsha(*)", "dsha_fingerprint(*)").collect().head

  /** dsha_final and dsha_final_fingerprint of the SQL merge of some states (in a shuffled, repartitioned order). */
  private def merged(parts: Seq[Array[Byte]]): Row =
    states(parts).repartition(2)
      .selectExpr("dsha_merge(s) AS m")
      .selectExpr("dsha_final(m)", "dsha_final_fingerprint(m)")
      .collect().head

  private def messages(e: Throwable): String =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).map(_.getMessage).mkString("\n")

  private def error(f: => Any): String = messages(intercept[Exception](f))

  for (seed <- SparkSuite.randomTableSeeds(6)) {
    test(s"merging the states of random disjoint splits gives the whole table's digest and fingerprint, table #$seed") {
      val gen = new RandomTables(100 + seed)
      val schema = gen.structType(1 + gen.random.nextInt(4), depth = 3)
      val rows = gen.rows(schema, 10 + gen.random.nextInt(30))
      val k = 1 + gen.random.nextInt(5)
      // Each row goes to a random part; some parts may be empty (their state is the state of zero rows).
      val assignment = rows.map(_ => gen.random.nextInt(k))
      val parts = (0 until k).map(p => rows.zip(assignment).collect { case (r, `p`) => r })
      sameInAllModes {
        val expected = whole(table(schema, rows))
        val partStates = parts.map(p => stateOf(table(schema, p)))
        assert(merged(partStates) == expected, "merge of the parts' states")
        assert(merged(gen.random.shuffle(partStates)) == expected, "merge in another order")
        // The state of the whole is the merge of the parts' states, byte for byte.
        val direct = stateOf(table(schema, rows))
        val viaSql = states(partStates).selectExpr("dsha_merge(s)").collect().head.getAs[Array[Byte]](0)
        assert(java.util.Arrays.equals(viaSql, direct), "merged state bytes")
        assert(java.util.Arrays.equals(partStates.map(DigestState.parse).reduce(_ merge _).toBytes, direct))
        assert(merged(Seq(direct)) == expected, "final of the whole's state")
        Bytes.hex(direct)
      }
    }
  }

  test("GROUP BY: the merge of per-group states is the digest of the whole; merges GROUP BY a key give each group's") {
    val gen = new RandomTables(7)
    val schema = gen.structType(3, depth = 2)
    val df = table(schema, gen.rows(schema, 60))
    df.createOrReplaceTempView("random_rows")
    spark.sql("SELECT id % 3 AS k, id, CAST(id * 7 AS STRING) AS v FROM range(200)").createOrReplaceTempView("keyed")
    sameInAllModes {
      val expected = whole(df)
      // Groups decided by the rows' own digests: a split into up to 5 parts, independent of the schema.
      val columns = schema.fieldNames.map(n => s"`$n`").mkString(", ")
      val parts = spark.sql(
        s"SELECT dsha_state($columns) AS s FROM (SELECT *, logical_hash(*) AS h FROM random_rows) GROUP BY pmod(hash(h), 5)"
      )
      assert(parts.count() > 1)
      assert(merged(parts.collect().map(_.getAs[Array[Byte]](0)).toSeq) == expected)
      val perKey = spark.sql(
        """SELECT k, dsha_final(dsha_merge(s)) AS d, dsha_final_fingerprint(dsha_merge(s)) AS f
          |FROM (SELECT k, dsha_state(*) AS s FROM keyed GROUP BY k, id % 5) GROUP BY k""".stripMargin
      ).collect().map(r => r.getLong(0) -> (r.getString(1), r.getStruct(2))).toMap
      val direct = spark.sql("SELECT k, dsha(*), dsha_fingerprint(*) FROM keyed GROUP BY k")
        .collect().map(r => r.getLong(0) -> (r.getString(1), r.getStruct(2))).toMap
      assert(perKey == direct && perKey.size == 3)
      perKey.map { case (k, (d, _)) => k -> d }
    }
  }

  test("unions: the state of a UNION ALL is the merge of the two states; merges of merges are merges") {
    sameInAllModes {
      val a = "SELECT id, CAST(id AS STRING) AS s FROM range(0, 40)"
      val b = "SELECT id, CAST(id AS STRING) AS s FROM range(30, 90)"
      val union = spark.sql(s"SELECT dsha_state(*) FROM ($a UNION ALL $b)").collect().head.getAs[Array[Byte]](0)
      val states = spark.sql(s"SELECT dsha_state(*) AS s FROM ($a) UNION ALL SELECT dsha_state(*) FROM ($b)")
      val merge = states.selectExpr("dsha_merge(s)").collect().head.getAs[Array[Byte]](0)
      assert(java.util.Arrays.equals(union, merge))
      // Merging [a], then that with [b], equals merging [a, b].
      states.createOrReplaceTempView("two_states")
      val nested = spark.sql(
        "SELECT dsha_merge(m) FROM (SELECT dsha_merge(s) AS m FROM two_states GROUP BY s = (SELECT min(s) FROM two_states))"
      ).collect().head.getAs[Array[Byte]](0)
      assert(java.util.Arrays.equals(nested, merge))
      val digest = spark.sql(s"SELECT dsha(*) FROM ($a UNION ALL $b)").collect().head.getString(0)
      assert(spark.sql(s"SELECT dsha_final(dsha_merge(s)) FROM two_states").collect().head.getString(0) == digest)
      digest
    }
  }

  test("empty input: dsha_state is the state of zero rows; dsha_merge of no states (or only NULLs) is NULL") {
    sameInAllModes {
      val zero = spark.sql("SELECT dsha_state(*) AS s FROM range(0)")
      val row = zero.selectExpr("dsha_final(s)", "dsha_final_fingerprint(s).rows").collect().head
      assert(row.getString(0) == spark.sql("SELECT dsha(*) FROM range(0)").collect().head.getString(0))
      assert(row.getLong(1) == 0L)
      zero.createOrReplaceTempView("zero_state")
      val none = spark.sql("SELECT dsha_merge(s), dsha_final(dsha_merge(s)) FROM zero_state WHERE s IS NULL")
      assert(none.collect().head == Row(null, null))
      val nulls = spark.sql("SELECT dsha_merge(s) FROM VALUES (CAST(NULL AS BINARY)), (NULL) AS t(s)")
      assert(nulls.collect().head.isNullAt(0))
      // NULLs beside states are skipped.
      val withNull = spark.sql("SELECT s FROM zero_state UNION ALL SELECT CAST(NULL AS BINARY)")
      assert(java.util.Arrays.equals(
        withNull.selectExpr("dsha_merge(s)").collect().head.getAs[Array[Byte]](0),
        zero.collect().head.getAs[Array[Byte]](0)
      ))
      assert(spark.sql("SELECT dsha_final(CAST(NULL AS BINARY))").collect().head.isNullAt(0))
      row.getString(0)
    }
  }

  test("states of different schemas do not merge: the error names both canonical schemas") {
    withConf(modes.head._2) {
      val message = error(spark.sql(
        "SELECT dsha_merge(s) FROM (SELECT dsha_state(*) AS s FROM range(3) UNION ALL " +
          "SELECT dsha_state(*) FROM VALUES (1) AS t(x))"
      ).collect())
      assert(message.contains("different schemas"), message)
      assert(message.contains("struct<\"id\":bigint>") && message.contains("struct<\"x\":int>"), message)
    }
    // The same columns under another name are another schema, too.
    val a = stateOf(spark.sql("SELECT 1 AS a"))
    val b = stateOf(spark.sql("SELECT 1 AS b"))
    assert(error(DigestState.parse(a).merge(DigestState.parse(b))).contains("struct<\"b\":int>"))
  }

  test("states of different algorithms do not merge: the error names both algorithm ids") {
    object OtherAlgorithm extends Algorithm {
      def id = "dsha-test"
      def description = "a test algorithm"
      def multihashCode: Int = 0x3d5aff
      def rowHasherClass = DshaV1.rowHasherClass
      def newRowHasher(schemaDigest: Array[Byte]) = DshaV1.newRowHasher(schemaDigest)
      def entrySetClass = DshaV1.entrySetClass
      def newEntrySet() = DshaV1.newEntrySet()
      def combiner = DshaV1.combiner
      def finalDigest(schemaDigest: Array[Byte], rows: Long, state: Array[Long]) = Array.emptyByteArray
    }
    val v1 = DigestState.parse(stateOf(spark.range(5).toDF()))
    val message = error(v1.merge(v1.copy(algorithm = OtherAlgorithm)))
    assert(message.contains("different algorithms: dsha-v1 and dsha-test"), message)
    // A state of an algorithm this dsha does not know is malformed here, and says which code it has.
    val unknown = error(DigestState.parse(v1.copy(algorithm = OtherAlgorithm).toBytes))
    assert(unknown.contains("unknown algorithm code 0x3d5aff"), unknown)
  }

  test("malformed states are errors that say what is wrong: magic, version, truncation, trailing bytes, schema text") {
    val good = stateOf(spark.sql("SELECT 1 AS a, 'x' AS b"))
    DigestState.parse(good)
    def malformed(bytes: Array[Byte], expected: String): Unit = {
      val direct = error(DigestState.parse(bytes))
      assert(direct.contains("malformed dsha state") && direct.contains(expected), direct)
      // Through SQL as well: a literal (folded by the optimizer) and a column (in a task), final and merge alike.
      val literal = error(spark.sql(s"SELECT dsha_final(X'${Bytes.hex(bytes)}')").collect())
      assert(literal.contains(expected), literal)
      val column = error(states(Seq(good, bytes)).repartition(2).selectExpr("dsha_merge(s)").collect())
      assert(column.contains("malformed dsha state") && column.contains(expected), column)
    }
    malformed("hello world".getBytes("UTF-8"), "bad magic")
    malformed(good.updated(4, 2.toByte), "format version 2")
    malformed(good ++ Array[Byte](0), "1 bytes after the end of the state")
    malformed(good.updated(good.length - 1, 'c'.toByte), "the schema text does not match its digest")
    // Every proper prefix is truncated (or, for the first bytes, a bad magic).
    for (n <- 0 until good.length) {
      val message = error(DigestState.parse(good.take(n)))
      assert(message.contains("truncated") || (n < 4 && message.contains("magic")), s"prefix of $n bytes: $message")
    }
    malformed(good.take(good.length - 3), "truncated")
  }

  test("type and arity errors name the function and the argument") {
    val merge = intercept[AnalysisException](spark.sql("SELECT dsha_merge(id) FROM range(3)").collect())
    assert(merge.getMessage.contains("dsha_merge takes a BINARY dsha state") && merge.getMessage.contains("BIGINT"))
    val fin = intercept[AnalysisException](spark.sql("SELECT dsha_final('x')").collect())
    assert(fin.getMessage.contains("dsha_final takes a BINARY dsha state"), fin.getMessage)
    val arity = error(spark.sql("SELECT dsha_final_fingerprint(X'00', X'01')").collect())
    assert(arity.contains("dsha_final_fingerprint takes one argument"), arity)
  }

  test(
    "the layout: magic, version, algorithm varint, then the schema digest, rows, sum and schema text (SPEC.md §11)"
  ) {
    val state = stateOf(spark.range(7).toDF())
    val fp = spark.range(7).selectExpr("dsha_fingerprint(*) AS f").selectExpr("f.*").collect().head
    val text = fp.getAs[String]("schema").getBytes("UTF-8")
    val hex = Bytes.hex(state)
    val sum = fp.getAs[String]("content_sum").grouped(2).toSeq.reverse.mkString // little-endian bytes
    assert(hex == "44534853" + "01" + "81b4f501" + "20000000" + fp.getAs[String]("schema_digest") +
      "0700000000000000" + "10000000" + sum + f"${text.length}%02x000000" + Bytes.hex(text))
  }

  test("dsha_state stays in whole-stage codegen HashAggregates, with and without GROUP BY") {
    withConf(modes.head._2) {
      spark.range(100).selectExpr("id", "id % 3 AS k").createOrReplaceTempView("hundred_keyed")
      for (
        query <- Seq("SELECT dsha_state(*) FROM hundred_keyed", "SELECT dsha_state(*) FROM hundred_keyed GROUP BY k")
      ) {
        val plan = spark.sql(query).queryExecution.executedPlan.toString
        assert(
          """\*\(\d+\) HashAggregate\(keys=\[[^\]]*\], functions=\[partial_dsha_state\(""".r.findFirstIn(plan).isDefined,
          plan
        )
        assert(!plan.contains("ObjectHashAggregate") && !plan.contains("SortAggregate"), plan)
      }
    }
  }

  test("Scala functions API equals SQL") {
    import org.apache.spark.sql.functions.col
    import io.dsha.functions._
    val df = spark.range(20).selectExpr("id", "id % 4 AS k")
    val parts = df.groupBy("k").agg(dsha_state(col("*")).alias("s"))
    val row = parts.agg(dsha_final(dsha_merge(col("s"))), dsha_final_fingerprint(dsha_merge(col("s")))).collect().head
    assert(row == whole(df))
  }
}
