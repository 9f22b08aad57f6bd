package io.dsha.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, UnsafeProjection}
import org.apache.spark.sql.catalyst.plans.physical.{Partitioning, SinglePartition, UnknownPartitioning}
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

import io.dsha.aggregate.UInt128
import io.dsha.encoding.{RowBytesWriter, RowSchema}
import io.dsha.hash.Murmur3x64Stream

/**
 * The partial (per-partition) step of `dsha(...)` without GROUP BY, put in place of Spark's partial HashAggregateExec
 * by [[HashRowBytes]]: it reads each row's values straight from its bytes ([[RowBytesWriter]]) and outputs, per
 * partition, the same aggregation buffer (rows, sum_low, sum_high for each digest) that the final aggregate merges.
 *
 * @param digests one entry per dsha aggregate: its canonical schema and, per argument, the input column holding it
 */
case class PartialDshaExec(digests: Seq[PartialDshaExec.Digest], output: Seq[Attribute], child: SparkPlan)
    extends UnaryExecNode {

  // A lazy val: Spark 3.5 declares QueryPlan.references a lazy val (which a def cannot override), Spark 4 a def.
  @transient override lazy val references: AttributeSet =
    AttributeSet(digests.flatMap(_.rowOrdinals).distinct.map(child.output))

  // Partial aggregates are merged after a shuffle to one partition, unless the input already is in one.
  override def outputPartitioning: Partitioning = child.outputPartitioning match {
    case SinglePartition => SinglePartition
    case other => UnknownPartitioning(other.numPartitions)
  }

  override def simpleString(maxFields: Int): String =
    s"PartialDsha [${digests.mkString(", ")}] (hashes row bytes), output=${output.mkString("[", ", ", "]")}"

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "rowsHashed" -> SQLMetrics.createMetric(sparkContext, "rows hashed")
  )

  override protected def doExecute(): RDD[InternalRow] = {
    val numOutputRows = longMetric("numOutputRows")
    val rowsHashed = longMetric("rowsHashed")
    val digests = this.digests
    val outputTypes = output.map(_.dataType)
    child.execute().mapPartitions(
      { rows =>
        val n = digests.size
        val writers = digests.map(d => RowBytesWriter(d.schema.encoding, d.rowOrdinals)).toArray
        val prefixes = digests.map(_.schema).toArray
        val h = new Murmur3x64Stream
        val low = new Array[Long](n)
        val high = new Array[Long](n)
        var count = 0L
        while (rows.hasNext) {
          val row = rows.next()
          var i = 0
          while (i < n) {
            val s = prefixes(i)
            h.reset(s.prefixH1, s.prefixH2, s.prefixLength)
            writers(i).write(h, row)
            h.finish()
            val digestLow = h.digestLow()
            high(i) = UInt128.addHigh(high(i), h.digestHigh(), low(i), digestLow)
            low(i) += digestLow
            i += 1
          }
          count += 1
        }
        rowsHashed += count
        numOutputRows += 1
        val buffer = new Array[Any](3 * n)
        for (i <- 0 until n) {
          buffer(3 * i) = count
          buffer(3 * i + 1) = low(i)
          buffer(3 * i + 2) = high(i)
        }
        Iterator.single(UnsafeProjection.create(outputTypes.toArray).apply(InternalRow.fromSeq(buffer.toSeq)))
      },
      preservesPartitioning = true
    )
  }

  override protected def withNewChildInternal(newChild: SparkPlan): PartialDshaExec = copy(child = newChild)
}

object PartialDshaExec {

  /** One dsha aggregate: its name and arguments (for EXPLAIN), canonical schema, and each argument's input column. */
  final case class Digest(function: String, fieldNames: Seq[String], schema: RowSchema, rowOrdinals: IndexedSeq[Int]) {
    override def toString: String = s"partial_$function(${fieldNames.mkString(", ")})"
  }
}
