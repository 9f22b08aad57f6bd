package io.dsha

import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.functions.col

import io.dsha.registration.DshaFunctions
import io.dsha.shims.SparkShims

/** The SQL surface: registration, EXPLAIN, GROUP BY, empty input, names, errors, wide and deep rows. */
class DshaSqlSuite extends SparkSuite {

  private def one(sql: String): Any = spark.sql(sql).collect().head.get(0)

  test("SELECT dsha(*) and logical_hash through spark.sql.extensions") {
    sameInAllModes {
      val d = one("SELECT dsha(*) FROM range(1000)").asInstanceOf[String]
      assert(d.startsWith("f81b4f50120") && d.length == 75)
      assert(one("SELECT logical_hash(map(1,2,3,4)) = logical_hash(map(3,4,1,2))") == true)
      assert(one("SELECT length(logical_hash(1, 'a'))") == 16)
    }
  }

  test("EXPLAIN shows dsha inside whole-stage codegen HashAggregates") {
    withConf(modes.head._2) {
      spark.range(100).createOrReplaceTempView("hundred")
      val plan = spark.sql("SELECT dsha(*) FROM hundred").queryExecution.executedPlan.toString
      assert("""\*\(\d+\) HashAggregate\(keys=\[\], functions=\[partial_dsha\(""".r.findFirstIn(plan).isDefined, plan)
      assert("""\*\(\d+\) HashAggregate\(keys=\[\], functions=\[dsha\(""".r.findFirstIn(plan).isDefined, plan)
      assert(!plan.contains("ObjectHashAggregate") && !plan.contains("SortAggregate"), plan)
    }
  }

  test("GROUP BY gives each group the digest of that group alone") {
    sameInAllModes {
      spark.sql("SELECT id % 3 AS k, id AS v FROM range(30)").createOrReplaceTempView("grouped")
      val byGroup = spark.sql("SELECT k, dsha(*) FROM grouped GROUP BY k").collect()
        .map(r => r.getLong(0) -> r.getString(1)).toMap
      assert(byGroup.size == 3)
      for (k <- 0L to 2L) {
        assert(byGroup(k) == digestOf(spark.sql(s"SELECT * FROM grouped WHERE k = $k")))
      }
      byGroup
    }
  }

  test("empty input: rows = 0, content 0, a digest that still depends on the schema") {
    sameInAllModes {
      val fp = spark.sql("SELECT dsha_fingerprint(*) AS f FROM range(10) WHERE id < 0").selectExpr("f.*").head()
      assert(fp.getAs[Long]("rows") == 0L)
      assert(fp.getAs[String]("content_sum") == "0" * 32)
      val otherSchema = one("SELECT dsha(*) FROM (SELECT CAST(id AS INT) AS id FROM range(10)) WHERE id < 0")
      assert(fp.getAs[String]("digest") != otherSchema)
      assert(fp.getAs[String]("digest") != one("SELECT dsha(*) FROM range(0, 1)"))
    }
  }

  test("arguments are identified by name; unnamed ones are _1, _2, ... by position") {
    sameInAllModes {
      assert(one("SELECT logical_hash(1 + 1) = (SELECT logical_hash(_1) FROM (SELECT 2 AS _1))") == true)
      assert(one("SELECT logical_hash(a, b) = logical_hash(b, a) FROM VALUES (1, 'x') AS t(a, b)") == true)
      assert(one("SELECT logical_hash(a) = logical_hash(b) FROM VALUES (1, 1) AS t(a, b)") == false)
      val df = spark.range(3)
      assert(
        df.select(io.dsha.functions.logical_hash(col("id").as("x"))).collect().toSeq.map(
          _.get(0).asInstanceOf[Array[Byte]].toSeq
        ) ==
          df.selectExpr("id AS x").selectExpr("logical_hash(x)").collect().toSeq.map(
            _.get(0).asInstanceOf[Array[Byte]].toSeq
          ),
        "a Column alias names the argument"
      )
      assert(one("SELECT logical_hash(1) = logical_hash(1L)") == false) // types are significant
      assert(one("SELECT logical_hash(CAST(1 AS DECIMAL(10,2))) = logical_hash(CAST(1 AS DECIMAL(12,2)))") == false)
    }
  }

  test("clear analysis errors: no arguments, duplicate names, unsupported types") {
    val none = intercept[AnalysisException](spark.sql("SELECT dsha() FROM range(1)").collect())
    assert(none.getMessage.contains("dsha needs at least one column"), none.getMessage)
    val dup = intercept[AnalysisException](spark.sql("SELECT dsha(*) FROM (SELECT 1 AS a, 2 AS a)").collect())
    assert(dup.getMessage.contains("`a`") && dup.getMessage.contains("duplicate name"), dup.getMessage)
    val nested = intercept[AnalysisException](
      spark.sql("SELECT logical_hash(s) FROM (SELECT named_struct('x', 1, 'x', 2) AS s)").collect()
    )
    assert(nested.getMessage.contains("`s`") && nested.getMessage.contains("duplicate"), nested.getMessage)
  }

  test("DESCRIBE FUNCTION EXTENDED documents usage and examples") {
    for (f <- DshaFunctions.names) {
      val text = spark.sql(s"DESCRIBE FUNCTION EXTENDED $f").collect().map(_.getString(0)).mkString("\n")
      assert(text.contains(s"Function: $f"), text)
      assert(
        text.contains("Usage:") && text.contains("Examples:") && text.contains("SPEC.md") ||
          f == "dsha_fingerprint" && text.contains("Examples:"),
        text
      )
    }
  }

  test("the documented examples return what DESCRIBE FUNCTION says") {
    val hex = one("SELECT hex(logical_hash(1, 'a'))")
    val text = spark.sql("DESCRIBE FUNCTION EXTENDED logical_hash").collect().map(_.getString(0)).mkString("\n")
    assert(text.contains(hex.toString), s"example output for logical_hash(1, 'a') should be $hex")
    val digest = one("SELECT dsha(*) FROM VALUES (1, 'a'), (2, 'b') AS t(id, name)")
    val dshaText = spark.sql("DESCRIBE FUNCTION EXTENDED dsha").collect().map(_.getString(0)).mkString("\n")
    assert(dshaText.contains(digest.toString), s"example output for dsha should be $digest")
  }

  test("every documented example returns the result DESCRIBE FUNCTION shows") {
    for (((id, info, _), i) <- DshaFunctions.all.zipWithIndex) {
      val lines = info.getExamples.linesIterator.map(_.trim).filter(_.nonEmpty).toSeq
      val examples = lines.zip(lines.drop(1)).collect { case (q, r) if q.startsWith("> ") => (q.drop(2), r) }
      assert(examples.nonEmpty, id.funcName)
      sameInBuildModes(i) {
        examples.foreach { case (query, expected) =>
          assert(String.valueOf(one(query.stripSuffix(";"))) == expected, query)
        }
      }
    }
  }

  test("1,500 columns: generated code is split and agrees with the interpreted path") {
    val df = spark.range(20).selectExpr((0 until 1500).map(i => s"id * $i AS c$i"): _*)
    // (on a partial build the digest and the sketch each in half the modes: all four between them)
    val digest = sameInBuildModes(0)(digestOf(df))
    assert(digestOf(df.select(df.columns.reverse.map(col).toIndexedSeq: _*)) == digest)
    // A sketch's projection and row-bytes paths too (row digests and filter words), over a cached copy and not.
    val cached = df.cache()
    def sketch(d: org.apache.spark.sql.DataFrame) = d.selectExpr("dsha_sketch(*)").head().getAs[Array[Byte]](0).toSeq
    val (plain, fromCache) = sameInBuildModes(1)((sketch(df), sketch(cached)))
    assert(plain == fromCache)
    cached.unpersist()
    val wideStruct = spark.range(5).selectExpr(
      "named_struct(" + (0 until 200).map(i => s"'f$i', id + $i").mkString(", ") + ") AS s"
    )
    sameInBuildModes(0)(digestOf(wideStruct))
  }

  test("nesting depth 30: structs, arrays and maps") {
    def nest(depth: Int, leaf: String, wrap: String => String): String =
      (1 to depth).foldLeft(leaf)((e, _) => wrap(e))
    val structs = nest(30, "id", e => s"named_struct('x', $e)")
    val arrays = nest(30, "id", e => s"array($e)")
    val maps = nest(30, "id", e => s"map(id, $e)")
    val df = spark.range(10).selectExpr(s"$structs AS s", s"$arrays AS a", s"$maps AS m")
    val digest = sameInAllModes(digestOf(df))
    val shallower = spark.range(10).selectExpr(
      s"${nest(29, "id", e => s"named_struct('x', $e)")} AS s",
      s"$arrays AS a",
      s"$maps AS m"
    )
    assert(digestOf(shallower) != digest)
  }

  test("a string of Spark's default collation written out (COLLATE UTF8_BINARY) is a string, as SPEC.md §2.3 says") {
    assume(SparkSuite.atLeast(spark.version, "4.0"), "collations need Spark 4.0")
    val explicit = "SELECT 'a' COLLATE UTF8_BINARY AS s, array('b' COLLATE UTF8_BINARY) AS t"
    val fp = spark.sql(s"SELECT dsha_fingerprint(*) AS f FROM ($explicit)").selectExpr("f.*").head()
    assert(fp.getAs[String]("schema") == "struct<\"s\":string,\"t\":array<string>>")
    val plain = "SELECT 'a' AS s, array('b') AS t"
    assert(sameInAllModes(digestOf(spark.sql(explicit))) == digestOf(spark.sql(plain)))
    assert(
      one(s"SELECT hex(logical_hash(s, t)) FROM ($explicit)") == one(s"SELECT hex(logical_hash(s, t)) FROM ($plain)")
    )
    // another collation is still part of the type
    assert(
      one("SELECT dsha(*) FROM (SELECT 'a' COLLATE UTF8_LCASE AS s)") != one("SELECT dsha(*) FROM (SELECT 'a' AS s)")
    )
  }

  test("CHAR and VARCHAR columns hash as strings") {
    withConf(Map("spark.sql.legacy.charVarcharAsString" -> "false")) {
      spark.sql("DROP TABLE IF EXISTS chars")
      spark.sql("CREATE TABLE chars (c CHAR(4), v VARCHAR(5)) USING parquet")
      spark.sql("INSERT INTO chars VALUES ('ab', 'ab')")
      val fp = spark.sql("SELECT dsha_fingerprint(*) AS f FROM chars").selectExpr("f.*").head()
      assert(fp.getAs[String]("schema") == "struct<\"c\":string,\"v\":string>")
      assert(fp.getAs[String]("digest") == one("SELECT dsha(*) FROM (SELECT 'ab  ' AS c, 'ab' AS v)"))
      spark.sql("DROP TABLE chars")
    }
  }

  test("Scala functions API equals SQL") {
    import io.dsha.functions._
    val df = spark.range(50).selectExpr("id AS a", "CAST(id AS STRING) AS b")
    val viaApi = df.agg(dsha(col("*"))).head().getString(0)
    assert(viaApi == digestOf(df))
    val rows = df.select(logical_hash(col("a"), col("b")).as("h")).collect().map(_.getAs[Array[Byte]](0).toSeq)
    val sqlRows = df.selectExpr("logical_hash(a, b)").collect().map(_.getAs[Array[Byte]](0).toSeq)
    assert(rows.toSeq == sqlRows.toSeq)
    assert(df.agg(dsha_fingerprint(col("*")).as("f")).selectExpr("f.rows").head().getLong(0) == 50L)
  }

  test("register() adds the functions to a running session that lacks them") {
    val session = spark.newSession()
    val registry = SparkShims.functionRegistry(session)
    DshaFunctions.names.foreach(n => registry.dropFunction(SparkShims.functionIdentifier(n)))
    assert(!DshaFunctions.isRegistered(session))
    val e = intercept[AnalysisException](session.sql("SELECT dsha(*) FROM range(3)").collect())
    assert(e.getMessage.contains("dsha"))
    DshaFunctions.register(session)
    assert(DshaFunctions.isRegistered(session))
    assert(session.sql("SELECT dsha(*) FROM range(3)").head().getString(0) == one("SELECT dsha(*) FROM range(3)"))
  }
}
