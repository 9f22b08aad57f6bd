package io.dsha.algorithm

import org.apache.spark.sql.catalyst.expressions.Expression

/**
 * How row digests combine into a table's state: a commutative, associative operation on a fixed number of 64-bit
 * words, whose zero is all words 0 — so any split of the rows, merged in any order, gives the same state. The same
 * operation twice: on arrays of words (execution code, write-time digests) and as Catalyst expressions over
 * aggregation buffer slots (so Spark's aggregate stays in whole-stage codegen).
 */
trait Combiner extends Serializable {

  /** Names of the state's words, least significant first: the aggregation buffer slots after `rows`. */
  def wordNames: Seq[String]

  final def words: Int = wordNames.size

  /** Adds the finished row digest of `row` to `state(at until at + words)`. */
  def add(state: Array[Long], at: Int, row: RowHasher): Unit

  /** Adds `other(otherAt until otherAt + words)` to `state(at until at + words)`. */
  def merge(state: Array[Long], at: Int, other: Array[Long], otherAt: Int): Unit

  /** The update of each state word, given the words and an expression of the row's finished RowHasher. */
  def updateExpressions(state: Seq[Expression], row: Expression): Seq[Expression]

  /** The merge of each state word. */
  def mergeExpressions(left: Seq[Expression], right: Seq[Expression]): Seq[Expression]

  /** The state as printed in fingerprints (`content_sum`). */
  def hex(state: Array[Long]): String
}
