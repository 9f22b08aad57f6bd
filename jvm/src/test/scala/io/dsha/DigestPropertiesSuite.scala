package io.dsha

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types.StructType

/**
 * Properties over random schemas and data: what must not change the digest (row order, partitioning, splits, column
 * order, codegen mode) and what must (a changed cell, a dropped, duplicated or moved value).
 */
class DigestPropertiesSuite extends SparkSuite {

  private val Seeds = SparkSuite.randomTableSeeds(12)

  private def table(schema: StructType, rows: Seq[Row]): DataFrame =
    spark.createDataFrame(rows.asJava, schema)

  private def digest(schema: StructType, rows: Seq[Row]): String = digestOf(table(schema, rows))

  for (seed <- Seeds) {
    test(s"invariances and sensitivities, random table #$seed") {
      val gen = new RandomTables(seed)
      val schema = gen.structType(2 + gen.random.nextInt(4), depth = 3)
      val rows = gen.rows(schema, 20 + gen.random.nextInt(20))
      val df = table(schema, rows)

      val base = sameInAllModes(digest(schema, rows))
      sameInAllModes {
        assert(digest(schema, gen.random.shuffle(rows)) == base, "row order")
        assert(df.repartition(7).selectExpr("dsha(*)").head().getString(0) == base, "repartition")
        assert(df.coalesce(1).selectExpr("dsha(*)").head().getString(0) == base, "coalesce")
        val (a, b) = rows.splitAt(rows.size / 3)
        assert(digestOf(table(schema, b).union(table(schema, a))) == base, "union of splits")
        assert(digestOf(df.select(df.columns.reverse.map(col).toIndexedSeq: _*)) == base, "column order")
        // The aggregate's content is exactly the sum mod 2^128 of the per-row digests (read little-endian).
        val perRow = df.selectExpr("logical_hash(*)").collect().map(_.getAs[Array[Byte]](0))
        val sum = perRow.map(d => BigInt(1, d.reverse)).sum.mod(BigInt(2).pow(128))
        val fp = df.selectExpr("dsha_fingerprint(*) AS f").selectExpr("f.content_sum", "f.rows").head()
        assert(fp.getString(0) == f"$sum%032x", "content sum")
        assert(fp.getLong(1) == rows.size.toLong, "row count")
      }

      // Sensitivities: each mutation must change the digest.
      val i = gen.random.nextInt(rows.size)
      val c = gen.random.nextInt(schema.size)
      val changed = Iterator.continually(gen.value(schema(c).dataType)).find(v => !same(v, rows(i).get(c))).get
      val mutated = rows.updated(i, Row.fromSeq(rows(i).toSeq.updated(c, changed)))
      assert(digest(schema, mutated) != base, "changed cell")
      assert(digest(schema, rows.patch(i, Nil, 1)) != base, "dropped row")
      assert(digest(schema, rows :+ rows(i)) != base, "duplicated row")
      // Swap column c between two rows that differ in column c and in some other column.
      val j = rows.indices.find(j =>
        !same(rows(j).get(c), rows(i).get(c)) &&
          schema.indices.exists(k => k != c && !same(rows(j).get(k), rows(i).get(k)))
      )
      j.foreach { j =>
        val swapped = rows
          .updated(i, Row.fromSeq(rows(i).toSeq.updated(c, rows(j).get(c))))
          .updated(j, Row.fromSeq(rows(j).toSeq.updated(c, rows(i).get(c))))
        assert(digest(schema, swapped) != base, "values swapped across rows")
      }
    }
  }

  /** Equality as the digest sees it: -0.0 and 0.0, and all NaNs, are the same; arrays compare by content. */
  private def same(a: Any, b: Any): Boolean = (a, b) match {
    case (x: Array[Byte], y: Array[Byte]) => java.util.Arrays.equals(x, y)
    case (x: Double, y: Double) => (x.isNaN && y.isNaN) || x == y
    case (x: Float, y: Float) => (x.isNaN && y.isNaN) || x == y
    case (x: java.math.BigDecimal, y: java.math.BigDecimal) => x.compareTo(y) == 0
    case (x: Seq[_], y: Seq[_]) => x.size == y.size && x.zip(y).forall { case (p, q) => same(p, q) }
    case (x: Row, y: Row) => same(x.toSeq, y.toSeq)
    case (x: Map[_, _], y: Map[_, _]) =>
      x.size == y.size && x.forall { case (k, v) => y.exists { case (k2, v2) => same(k, k2) && same(v, v2) } }
    case _ => a == b
  }
}
