package io.dsha.aggregate

import org.apache.spark.sql.catalyst.expressions.AttributeReference
import org.apache.spark.sql.types.LongType

import io.dsha.algorithm.Combiner

/**
 * The state of a digest over some rows: the row count and the combiner's words. Its layout as an aggregation buffer
 * (`rows`, then the combiner's words, all BIGINT NOT NULL) is declared here once, for the aggregates and for the
 * execution code that produces their partial buffers.
 */
final class DigestState(val rows: Long, val words: Array[Long]) {
  def bufferValues: Seq[Any] = rows +: words.toSeq
}

object DigestState {
  def bufferNames(combiner: Combiner): Seq[String] = "rows" +: combiner.wordNames

  def bufferAttributes(combiner: Combiner): Seq[AttributeReference] =
    bufferNames(combiner).map(AttributeReference(_, LongType, nullable = false)())
}
