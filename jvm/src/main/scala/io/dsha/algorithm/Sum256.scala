package io.dsha.algorithm

import org.apache.spark.sql.catalyst.expressions.Expression

import io.dsha.expressions.{RowDigestWord, WordOfSum}
import io.dsha.hash.WideAdd

/** The sum of 256-bit row values mod 2^256 (dsha-keyed-v1, SPEC.md §16.2), as four words, least significant first. */
case object Sum256 extends Combiner {
  val wordNames: Seq[String] = Seq("sum_0", "sum_1", "sum_2", "sum_3")

  private def addWords(state: Array[Long], at: Int, word: Int => Long): Unit = {
    var carry = 0L
    var i = 0
    while (i < 4) {
      val a = state(at + i)
      val b = word(i)
      state(at + i) = a + b + carry
      carry = WideAdd.carry(a, b, carry)
      i += 1
    }
  }

  def add(state: Array[Long], at: Int, row: RowHasher): Unit = addWords(state, at, row.digestWord)

  def merge(state: Array[Long], at: Int, other: Array[Long], otherAt: Int): Unit =
    addWords(state, at, i => other(otherAt + i))

  def updateExpressions(state: Seq[Expression], row: Expression): Seq[Expression] = {
    val digest = state.indices.map(RowDigestWord(row, _))
    state.indices.map(k => WordOfSum(state.take(k + 1), digest.take(k + 1)))
  }

  def mergeExpressions(left: Seq[Expression], right: Seq[Expression]): Seq[Expression] =
    left.indices.map(k => WordOfSum(left.take(k + 1), right.take(k + 1)))

  /** 64 hex digits, most significant first (as dsha-v1's `content_sum`). */
  def hex(state: Array[Long]): String = state.reverse.map(w => f"$w%016x").mkString
}
