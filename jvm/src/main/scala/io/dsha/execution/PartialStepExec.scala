package io.dsha.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection
import org.apache.spark.sql.catalyst.plans.physical.{Partitioning, SinglePartition, UnknownPartitioning}
import org.apache.spark.sql.execution.UnaryExecNode
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * The partial step of a global aggregate that [[HashRowBytes]] puts in place of Spark's: one output row per input
 * partition, the aggregation buffer Spark's partial step would output, which the final aggregate merges.
 */
trait PartialStepExec extends UnaryExecNode {

  // Partial aggregates are merged after a shuffle to one partition, unless the input already is in one.
  override def outputPartitioning: Partitioning = child.outputPartitioning match {
    case SinglePartition => SinglePartition
    case other => UnknownPartitioning(other.numPartitions)
  }

  override lazy val metrics: Map[String, SQLMetric] = Map(
    "numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"),
    "rowsHashed" -> SQLMetrics.createMetric(sparkContext, "rows hashed")
  )

  /** Each partition's rows through `hash`, which returns how many rows it hashed and the buffer's values. */
  protected def perPartition(hash: Iterator[InternalRow] => (Long, Seq[Any])): RDD[InternalRow] = {
    val numOutputRows = longMetric("numOutputRows")
    val rowsHashed = longMetric("rowsHashed")
    val outputTypes = output.map(_.dataType).toArray
    CachedRows.rows(child).mapPartitions(
      { rows =>
        val (n, buffer) = hash(rows)
        rowsHashed += n
        numOutputRows += 1
        Iterator.single(UnsafeProjection.create(outputTypes).apply(InternalRow.fromSeq(buffer)))
      },
      preservesPartitioning = true
    )
  }
}
