package io.dsha

/**
 * The golden vectors of SPEC.md, checked on this Spark version in every execution mode (SparkSuite.modes): the digest
 * string, the canonical schema and its digest, the content sum and the state; every row digest in generated code and
 * in the interpreted path (SparkSuite.sameInProjectionModes). A vector's optional `arguments`
 * is the SQL argument list of its dsha calls (default `*`); its optional `min_spark` is a major.minor version.
 */
class GoldenVectorsSuite extends GoldenSuite {

  private val vectors = GoldenFiles.vectors

  test("the vector file covers the seeds' collision cases and SPARK-27619") {
    val names = vectors.map(_.get("name").asText()).toSet
    Seq(
      "nested_12_3",
      "nested_1_23",
      "strings_ab_c",
      "strings_a_bc",
      "array_with_null",
      "array_without_null",
      "map_1234",
      "map_3412"
    ).foreach(n => assert(names(n), n))
    assert(vectors.size >= 40)
  }

  test("collation_utf8_binary_explicit has the digest of the same table without COLLATE (SPEC.md §2.3)") {
    val v = vectors.find(_.get("name").asText() == "collation_utf8_binary_explicit").get
    onThisSpark(v) {
      val explicit = v.get("sql").asText()
      val plain = explicit.replaceAll("(?i) COLLATE UTF8_BINARY", "")
      assert(!plain.toUpperCase.contains("COLLATE"), plain)
      assert(one(s"SELECT dsha(*) FROM ($plain)") == v.get("dsha").asText())
    }
  }

  for (v <- vectors) {
    val name = v.get("name").asText()
    test(s"golden vector: $name") {
      onThisSpark(v) {
        val sql = v.get("sql").asText()
        val arguments = GoldenFiles.arguments(v)
        val expectedRows = GoldenFiles.elements(v.get("row_digests")).map(_.asText())
        // A shuffle first, so hashing runs on real rows (generated or interpreted), not folded on the driver.
        def shuffled = spark.sql(sql).repartition(2)
        // The fingerprint and the state in one aggregate (one partial step hashes both: one job, not two).
        val (fingerprint, state) = sameInAllModes {
          val fp = shuffled
            .selectExpr(s"dsha_fingerprint($arguments) AS f", s"lower(hex(dsha_state($arguments))) AS state")
            .selectExpr("f.*", "state")
            .collect()
            .head
          (
            (
              fp.getAs[String]("digest"),
              fp.getAs[String]("schema"),
              fp.getAs[String]("schema_digest"),
              fp.getAs[String]("content_sum"),
              fp.getAs[Long]("rows")
            ),
            fp.getAs[String]("state")
          )
        }
        val rowDigests = sameInProjectionModes {
          shuffled.selectExpr(s"lower(hex(logical_hash($arguments)))").collect().map(_.getString(0)).toSeq.sorted
        }
        assert(fingerprint._2 == v.get("schema").asText(), "canonical schema")
        assert(fingerprint._3 == v.get("schema_digest").asText(), "schema digest")
        assert(rowDigests == expectedRows.sorted, "row digests")
        assert(fingerprint._4 == v.get("content_sum").asText(), "content sum")
        assert(fingerprint._5 == expectedRows.size.toLong, "row count")
        assert(fingerprint._1 == v.get("dsha").asText(), "digest")
        // The state (SPEC.md §11), and what it finalises to.
        val expectedState = v.get("state").asText()
        assert(state == expectedState, "state")
        assert(one(s"SELECT dsha_final(X'$expectedState')") == v.get("dsha").asText(), "dsha_final of the state")
        val fromState = spark.sql(s"SELECT dsha_final_fingerprint(X'$expectedState') AS f").selectExpr("f.*").head()
        assert(fromState.getAs[String]("content_sum") == v.get("content_sum").asText(), "content sum of the state")
        assert(fromState.getAs[String]("schema") == v.get("schema").asText(), "schema of the state")
        // The same data, constant-folded on the driver, gives the same digest.
        assert(spark.sql(s"SELECT dsha($arguments) FROM ($sql)").collect().head.getString(0) == v.get("dsha").asText())
      }
    }
  }
}
