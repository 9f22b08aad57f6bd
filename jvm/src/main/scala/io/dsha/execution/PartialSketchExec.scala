package io.dsha.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeSet, UnsafeProjection, UnsafeRow}
import org.apache.spark.sql.execution.SparkPlan

import io.dsha.aggregate.DshaSketch

/**
 * The partial (per-partition) step of `dsha_sketch(...)` without GROUP BY, put in place of Spark's partial
 * ObjectHashAggregateExec by [[HashRowBytes]]: rows are read from their bytes straight into the sketch
 * ([[io.dsha.sketch.SketchRowBytes]]), with none of the aggregation map's work per row. Outputs, per partition, the
 * serialised sketches that the final aggregate merges: the buffer Spark's partial step would output.
 *
 * @param sketches each sketch aggregate with, per argument, the input column holding it
 */
case class PartialSketchExec(sketches: Seq[(DshaSketch, IndexedSeq[Int])], output: Seq[Attribute], child: SparkPlan)
    extends PartialStepExec {

  // A lazy val: Spark 3.5 declares QueryPlan.references a lazy val (which a def cannot override), Spark 4 a def.
  @transient override lazy val references: AttributeSet =
    AttributeSet(sketches.flatMap(_._2).distinct.map(child.output))

  override def simpleString(maxFields: Int): String =
    s"PartialSketch [${sketches.map(s => s"partial_${s._1.prettyName}(${s._1.fieldNames.mkString(", ")})").mkString(", ")}]" +
      s" (hashes row bytes${CachedRows.note(child)}), output=${output.mkString("[", ", ", "]")}"

  override protected def doExecute(): RDD[InternalRow] = {
    val inputTypes = child.output.map(_.dataType).toArray
    val functions = sketches
    perPartition { rows =>
      val buffers = functions.map(_._1.createAggregationBuffer()).toArray
      val adders = functions.map { case (f, ordinals) => f.rowBytes(ordinals).get }.toArray
      lazy val toUnsafe = UnsafeProjection.create(inputTypes)
      var n = 0L
      while (rows.hasNext) {
        val row = rows.next() match {
          case u: UnsafeRow => u
          case other => toUnsafe(other)
        }
        var i = 0
        while (i < adders.length) {
          adders(i).add(buffers(i), row)
          i += 1
        }
        n += 1
      }
      (n, buffers.map(_.toBytes: Any).toSeq)
    }
  }

  override protected def withNewChildInternal(newChild: SparkPlan): PartialSketchExec = copy(child = newChild)
}
