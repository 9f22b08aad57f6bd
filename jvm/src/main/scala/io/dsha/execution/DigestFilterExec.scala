package io.dsha.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{
  And,
  Attribute,
  AttributeSet,
  BindReferences,
  Expression,
  SortOrder,
  UnsafeRow
}
import org.apache.spark.sql.catalyst.plans.physical.Partitioning
import org.apache.spark.sql.execution.{SparkPlan, UnaryExecNode}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

import io.dsha.algorithm.DshaV1
import io.dsha.encoding.RowBytesWriter
import io.dsha.expressions.{LogicalFilterWordIn, LogicalHashIn}
import io.dsha.sketch.FilterWordReader

/**
 * `WHERE logical_hash_in(digests, columns...)` over rows that exist anyway, put in place of Spark's FilterExec by
 * [[HashRowBytes]]: each row's digest is hashed straight from its bytes (as [[PartialDshaExec]] does) and looked up;
 * the rows pass through unchanged. The same rows as the generated filter. With a prefilter (`WHERE
 * logical_filter_word_in(words, columns...) AND logical_hash_in(...)`, as dsha.diff asks), a row is hashed only when
 * its filter word, read from its slots, is one of the words.
 *
 * @param condition   the digest test, for EXPLAIN and for rows that are not UnsafeRows
 * @param rowOrdinals per argument position of `condition`, the input column holding it
 * @param prefilter   the filter word test, with per argument position the input column holding it
 */
case class DigestFilterExec(
    condition: LogicalHashIn,
    rowOrdinals: IndexedSeq[Int],
    child: SparkPlan,
    prefilter: Option[(LogicalFilterWordIn, IndexedSeq[Int])] = None
) extends UnaryExecNode {

  override def output: Seq[Attribute] = child.output
  override def outputPartitioning: Partitioning = child.outputPartitioning
  override def outputOrdering: Seq[SortOrder] = child.outputOrdering

  // A lazy val: Spark 3.5 declares QueryPlan.references a lazy val (which a def cannot override), Spark 4 a def.
  @transient override lazy val references: AttributeSet =
    AttributeSet((rowOrdinals ++ prefilter.toSeq.flatMap(_._2)).distinct.map(child.output))

  override def simpleString(maxFields: Int): String =
    s"DigestFilter ${prefilter.map(p => s"${p._1} AND ").getOrElse("")}$condition (hashes row bytes${CachedRows.note(child)})"

  override lazy val metrics: Map[String, SQLMetric] =
    Map("numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"))

  override protected def doExecute(): RDD[InternalRow] = {
    val numOutputRows = longMetric("numOutputRows")
    val schema = condition.schema
    val digests = condition.digests
    val whole = prefilter.map(p => And(p._1, condition)).getOrElse(condition)
    val fallback = BindReferences.bindReference(whole: Expression, child.output) // rows that are not UnsafeRows
    val words = prefilter.map { case (p, ordinals) => (p.schema.row, ordinals, p.words) }
    CachedRows.rows(child).mapPartitions(
      rows => {
        val writer = RowBytesWriter(schema.row, rowOrdinals, DshaV1)
        val h = DshaV1.newRowHasher(schema.digest)
        val (reader, wanted) = words match {
          case Some((row, ordinals, set)) => (FilterWordReader(row, ordinals), set)
          case None => (null, null)
        }
        rows.filter { row =>
          val keep = row match {
            case u: UnsafeRow =>
              (reader == null || wanted.contains(reader.word(u))) && {
                h.startRow()
                writer.write(h, u)
                h.finishRow()
                digests.contains(h.digestWord(0), h.digestWord(1))
              }
            case other => fallback.eval(other).asInstanceOf[Boolean]
          }
          if (keep) numOutputRows += 1
          keep
        }
      },
      preservesPartitioning = true
    )
  }

  override protected def withNewChildInternal(newChild: SparkPlan): DigestFilterExec = copy(child = newChild)
}
