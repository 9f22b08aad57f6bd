package io.dsha

import com.fasterxml.jackson.databind.JsonNode
import org.apache.spark.sql.{DataFrame, Row}

import io.dsha.GoldenFiles.{elements, fields, hexBytes, table, text}
import io.dsha.sketch.{Sketch, SketchDecoder}
import io.dsha.util.Bytes

/**
 * SPEC.md §17.6: the sketch golden vectors (tests/golden/vectors-sketch.json, written by the independent reference),
 * byte for byte, each in half the execution modes (one generated, one interpreted; each mode runs half of them), every
 * fourth one in one on partial builds (SparkSuite.entriesOfThisBuild, sameInModesByIndex): each table's sketch at 6
 * cells with column digests and at 1 cell without, and its rows' filter words (its sketch minus the empty one, decoded); a sketch at 12 cells and at 3 and 4 (its folds);
 * left/right sketches and their decoded difference (and, without folding, at the difference's own size); sketches of
 * format version 1, decoded and merged with version 2.
 */
class GoldenSketchVectorsSuite extends GoldenSuite {

  private val file = GoldenFiles.read("vectors-sketch.json")
  require(text(file, "algorithm") == "dsha-v1", "tests/golden/vectors-sketch.json is not of dsha-v1")

  /**
   * A decoded difference as the reference writes it: success, the cells it decoded at, the signed count of each row
   * digest (hex, byte order) and each one's filter word (None where the filter words are not valid), when it decoded.
   */
  private case class Decoded(
      success: Boolean,
      cells: Option[Int],
      entries: Option[Map[String, Long]],
      filtersValid: Boolean,
      filters: Option[Map[String, Option[Long]]]
  )

  /** The reference's decoding (`decode`, or `decode_at_size` with its `size`). */
  private def expected(d: JsonNode, cellsField: String): Decoded = {
    val success = d.get("success").asBoolean()
    val filtersValid = d.get("filters_valid").asBoolean()
    val entries = if (success) Some(fields(d.get("entries")).map { case (k, n) => k -> n.asLong() }) else None
    val filters = entries.map { e =>
      if (filtersValid) fields(d.get("filters")).map { case (k, f) => k -> Some(f.asLong()) }
      else e.map { case (k, _) => k -> None }
    }
    val cells = Option(d.get(cellsField)).filterNot(_.isNull).map(_.asInt())
    Decoded(success, cells, entries, filtersValid, filters)
  }

  /** dsha_sketch_diff of two sketches (hex); a failure must estimate the difference's size. */
  private def decode(left: String, right: String): Decoded = {
    val d = spark.sql(s"SELECT dsha_sketch_diff(X'$left', X'$right') AS d").selectExpr("d.*").head()
    val success = d.getAs[Boolean]("decoded")
    if (!success) assert(d.getAs[Long]("estimate") > 0, "the estimate of a difference that does not decode")
    val entries = Option(d.getAs[scala.collection.Seq[Row]]("entries")).map(_.toSeq)
    def digest(e: Row) = Bytes.hex(e.getAs[Array[Byte]]("digest"))
    Decoded(
      success,
      Option(d.getAs[Any]("cells_used")).map(_.asInstanceOf[Int]),
      entries.map(_.map(e => digest(e) -> e.getAs[Long]("count")).toMap),
      d.getAs[Boolean]("filters_valid"),
      entries.map(_.map(e => digest(e) -> Option(e.getAs[Any]("filter")).map(_.asInstanceOf[Long])).toMap)
    )
  }

  /** The two sketches' difference peeled at its own size (their greatest common divisor), without folding. */
  private def decodeAtSize(left: String, right: String): Decoded = {
    val r = SketchDecoder.decode(Sketch.parse(hexBytes(left)).minus(Sketch.parse(hexBytes(right))))
    val digests = (0 until r.size).map { k =>
      val b = java.nio.ByteBuffer.allocate(16).order(java.nio.ByteOrder.LITTLE_ENDIAN)
      Bytes.hex(b.putLong(r.lo(k)).putLong(r.hi(k)).array())
    }
    val entries = if (r.decoded) Some(digests.zip(r.count).toMap) else None
    val filters = entries.map(_ => digests.zip(r.filter.map(f => Some(f).filter(_ => r.filtersValid))).toMap)
    Decoded(r.decoded, Some(r.cells), entries, r.filtersValid, filters)
  }

  /** dsha_sketch (hex) of a table at `cells` cells, with column digests or without. */
  private def sketch(df: DataFrame, arguments: String, cells: Int, columns: Boolean = true): String =
    withConf(Map(Sketch.CellsSetting -> cells.toString, Sketch.ColumnsSetting -> columns.toString)) {
      df.selectExpr(s"lower(hex(dsha_sketch($arguments)))").head().getString(0)
    }

  /** A query's rows after a shuffle, so that hashing runs on real rows (generated or interpreted). */
  private def shuffled(sql: String): DataFrame = spark.sql(sql).repartition(2)

  for ((s, index) <- SparkSuite.entriesOfThisBuild(elements(file.get("sketches")))) {
    val name = text(s, "name")
    test(s"golden sketch: $name (6 cells, 1 cell without columns, filter words)") {
      val v = table(name)
      val args = GoldenFiles.arguments(v)
      onThisSpark(v) {
        val (m6, m1, decoded) = sameInModesByIndex(index) {
          val df = shuffled(text(s, "sql"))
          val m6 = sketch(df, args, 6)
          (m6, sketch(df, args, 1, columns = false), decode(m6, sketch(df.where("false"), args, 6)))
        }
        assert(m6 == text(s, "sketch_m6"), "sketch at 6 cells")
        assert(m1 == text(s, "sketch_m1_no_columns"), "sketch at 1 cell without columns")
        assert(decoded == expected(s.get("decode"), "cells_used"), "the rows' digests and filter words")
      }
    }
  }

  test("golden sketch fold: 12 cells, and 3 and 4 (its folds)") {
    val f = file.get("fold")
    val name = text(f, "name")
    val source = elements(file.get("sketches")).find(text(_, "name") == name).get
    val args = GoldenFiles.arguments(table(name))
    val sketches = sameInAllModes {
      val df = shuffled(text(source, "sql"))
      Seq(12, 3, 4).map(sketch(df, args, _))
    }
    assert(sketches == Seq("sketch_m12", "folded_m3", "folded_m4").map(text(f, _)))
    val m12 = Sketch.parse(hexBytes(text(f, "sketch_m12"))).cells
    for ((m, field) <- Seq(3 -> "folded_m3", 4 -> "folded_m4")) {
      assert(m12.fold(m).words.toSeq == Sketch.parse(hexBytes(text(f, field))).cells.words.toSeq, s"fold to $m")
    }
  }

  for ((d, index) <- SparkSuite.entriesOfThisBuild(elements(file.get("differences")))) {
    val name = text(d, "name")
    test(s"golden sketch difference: $name") {
      val m = Option(d.get("m")).map(_.asInt())
      val (mLeft, mRight) =
        (Option(d.get("m_left")).map(_.asInt()).orElse(m), Option(d.get("m_right")).map(_.asInt()).orElse(m))
      onThisSpark(d) {
        val (left, right, decoded) = sameInModesByIndex(index) {
          val left = sketch(shuffled(text(d, "sql_left")), "*", mLeft.get)
          val right = sketch(shuffled(text(d, "sql_right")), "*", mRight.get)
          (left, right, decode(left, right))
        }
        assert(left == text(d, "sketch_left") && right == text(d, "sketch_right"), "sketches")
        assert(decoded == expected(d.get("decode"), "cells_used"), "decoded at the smallest fold")
        assert(decodeAtSize(left, right) == expected(d.get("decode_at_size"), "size"), "decoded at its own size")
      }
    }
  }

  for ((s, index) <- SparkSuite.entriesOfThisBuild(elements(file.get("version1")))) {
    val name = text(s, "name")
    test(s"golden sketch of format version 1: $name (decoded, merged with version 2)") {
      val v = table(name)
      val args = GoldenFiles.arguments(v)
      val v1 = text(s, "sketch_m6")
      onThisSpark(v) {
        val (v2, decoded) = sameInModesByIndex(index) {
          val df = shuffled(text(s, "sql"))
          (sketch(df, args, 6), decode(v1, sketch(df.where("false"), args, 6)))
        }
        assert(decoded == expected(s.get("decode"), "cells_used"), "version 1 minus the empty version 2 sketch")
        val merged = Sketch.parse(hexBytes(v1)).merge(Sketch.parse(hexBytes(v2))).toBytes
        assert(Bytes.hex(merged) == text(s, "merged_with_v2"), "merged with the version 2 sketch")
      }
    }
  }
}
