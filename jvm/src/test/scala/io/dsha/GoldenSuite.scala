package io.dsha

import java.io.File

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

/**
 * The golden vector files of tests/golden, read once: vectors.json (the tables, by name) and the files that give other
 * outputs of those tables (vectors-secure.json, vectors-keyed-v2.json, vectors-sketch.json).
 */
object GoldenFiles {
  private val mapper = new ObjectMapper()

  def read(file: String): JsonNode = mapper.readTree(new File(SparkSuite.repoRoot, s"tests/golden/$file"))

  /** The elements of a JSON array. */
  def elements(node: JsonNode): Seq[JsonNode] = node.elements().asScala.toSeq

  /** The fields of a JSON object, by name. */
  def fields(node: JsonNode): Map[String, JsonNode] = node.fields().asScala.map(e => e.getKey -> e.getValue).toMap

  def text(node: JsonNode, field: String): String = {
    val value = node.get(field)
    require(value != null && value.isTextual, s"golden vector field '$field' is missing or not text: $node")
    value.asText()
  }

  def optionalText(node: JsonNode, field: String): Option[String] = Option(node.get(field)).map(_.asText())

  /** The vectors of vectors.json (algorithm dsha-v1). */
  lazy val vectors: Seq[JsonNode] = {
    val doc = read("vectors.json")
    require(text(doc, "algorithm") == "dsha-v1", "tests/golden/vectors.json is not of dsha-v1")
    elements(doc.get("vectors"))
  }

  /** A table of vectors.json by its name (other files name their tables so). */
  def table(name: String): JsonNode =
    vectors.find(v => text(v, "name") == name).getOrElse(throw new NoSuchElementException(s"no vector '$name'"))

  /** The SQL argument list of a vector's dsha calls: its optional `arguments`, by default `*`. */
  def arguments(v: JsonNode): String = optionalText(v, "arguments").getOrElse("*")

  def hexBytes(hex: String): Array[Byte] = hex.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray
}

/** A suite of golden vectors: each runs only on the Spark lines that have its types, under its settings. */
trait GoldenSuite extends SparkSuite {

  /**
   * Runs `f` under the vector's own settings (its optional `conf`), or cancels the test when this Spark is older than
   * its optional `min_spark` (VARIANT, TIME, nanosecond timestamps, collations: the types a line lacks).
   */
  def onThisSpark[T](v: JsonNode)(f: => T): T = {
    val required = GoldenFiles.optionalText(v, "min_spark").getOrElse("0.0")
    assume(SparkSuite.atLeast(spark.version, required), s"needs Spark $required")
    val conf = Option(v.get("conf")).map(GoldenFiles.fields(_).map { case (k, c) => k -> c.asText() })
    withConf(conf.getOrElse(Map.empty))(f)
  }

  /**
   * The string columns `exprs` (aggregates) over the vector's table, after a shuffle so that hashing runs on real rows
   * (generated or interpreted), not folded on the driver; the same in the execution modes that the vector's
   * `index` in its file chooses (SparkSuite.sameInModesByIndex: half of them, one on partial builds).
   */
  def aggregatedInModesByIndex(index: Int, v: JsonNode, exprs: Seq[String]): Seq[String] = sameInModesByIndex(index) {
    val row = spark.sql(GoldenFiles.text(v, "sql")).repartition(2).selectExpr(exprs: _*).head()
    exprs.indices.map(row.getString)
  }

  /** A keyed algorithm's outputs under `key` (the SQL key argument and a comma): digest, content sum, state (hex). */
  def keyedColumns(key: String, args: String): Seq[String] = Seq(
    s"dsha_keyed($key$args)",
    s"dsha_keyed_fingerprint($key$args).content_sum",
    s"lower(hex(dsha_keyed_state($key$args)))"
  )

  /**
   * Asserts the outputs of [[keyedColumns]] are a vector's `dsha`, `content_sum` and `state`, and that this state
   * finalises to that digest without the key.
   */
  def assertKeyed(actual: Seq[String], expected: JsonNode): Unit = {
    val Seq(digest, contentSum, state) = Seq("dsha", "content_sum", "state").map(GoldenFiles.text(expected, _))
    assert(actual == Seq(digest, contentSum, state), "keyed digest, content sum and state")
    assert(one(s"SELECT dsha_final(X'$state')") == digest, "dsha_final of the keyed state")
  }

  /** The one value of a one-row, one-column query. */
  def one(sql: String): Any = spark.sql(sql).collect().head.get(0)
}
