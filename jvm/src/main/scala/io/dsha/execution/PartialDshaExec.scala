package io.dsha.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet}
import org.apache.spark.sql.execution.SparkPlan

import io.dsha.aggregate.DigestState

/**
 * The partial (per-partition) step of `dsha(...)` without GROUP BY, put in place of Spark's partial HashAggregateExec
 * by [[HashRowBytes]]: it hashes each row's values straight from its bytes ([[StateHasher]]) and outputs, per
 * partition, the same aggregation buffer ([[DigestState]]: rows, then the state words of each digest) that the final
 * aggregate merges.
 *
 * @param aggregates one entry per dsha aggregate: its canonical schema and, per argument, the input column holding it
 */
case class PartialDshaExec(aggregates: Seq[PartialDshaExec.Aggregate], output: Seq[Attribute], child: SparkPlan)
    extends PartialStepExec {

  // A lazy val: Spark 3.5 declares QueryPlan.references a lazy val (which a def cannot override), Spark 4 a def.
  @transient override lazy val references: AttributeSet =
    AttributeSet(aggregates.flatMap(_.spec.rowOrdinals).distinct.map(child.output))

  override def simpleString(maxFields: Int): String =
    s"PartialDsha [${aggregates.mkString(", ")}] (hashes row bytes${CachedRows.note(child)}), output=${output.mkString("[", ", ", "]")}"

  override protected def doExecute(): RDD[InternalRow] = {
    val specs = aggregates.map(_.spec)
    perPartition { rows =>
      val hasher = new StateHasher(specs).addAll(rows)
      (hasher.rows, hasher.states.flatMap(_.bufferValues))
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): PartialDshaExec = copy(child = newChild)
}

object PartialDshaExec {

  /** One dsha aggregate: its name and arguments (for EXPLAIN) and what to hash ([[DigestState]] buffer layout). */
  final case class Aggregate(function: String, fieldNames: Seq[String], spec: StateHasher.Spec) {
    override def toString: String = s"partial_$function(${fieldNames.mkString(", ")})"
  }
}
