package io.dsha.algorithm

import org.apache.spark.sql.catalyst.expressions.Expression

import io.dsha.expressions.{AddHighWithCarry, RowDigestWord, WrappingAdd}
import io.dsha.hash.UInt128

/** The sum of 128-bit row digests mod 2^128 (SPEC.md §5), as two words: low, high. */
case object Sum128 extends Combiner {
  val wordNames: Seq[String] = Seq("sum_low", "sum_high")

  def add(state: Array[Long], at: Int, row: RowHasher): Unit = {
    val low = row.digestWord(0)
    state(at + 1) = UInt128.addHigh(state(at + 1), row.digestWord(1), state(at), low)
    state(at) += low
  }

  /** Adds the 128-bit number `low + 2^64·high` at `at`. */
  def addWords(state: Array[Long], at: Int, low: Long, high: Long): Unit = {
    state(at + 1) = UInt128.addHigh(state(at + 1), high, state(at), low)
    state(at) += low
  }

  def merge(state: Array[Long], at: Int, other: Array[Long], otherAt: Int): Unit = {
    state(at + 1) = UInt128.addHigh(state(at + 1), other(otherAt + 1), state(at), other(otherAt))
    state(at) += other(otherAt)
  }

  def updateExpressions(state: Seq[Expression], row: Expression): Seq[Expression] = {
    val Seq(low, high) = state
    val digestLow = RowDigestWord(row, 0)
    Seq(WrappingAdd(low, digestLow), AddHighWithCarry(high, RowDigestWord(row, 1), low, digestLow))
  }

  def mergeExpressions(left: Seq[Expression], right: Seq[Expression]): Seq[Expression] = {
    val (Seq(lowA, highA), Seq(lowB, highB)) = (left, right)
    Seq(WrappingAdd(lowA, lowB), AddHighWithCarry(highA, highB, lowA, lowB))
  }

  /** 32 hex digits, most significant first (unlike row digests, which print in byte order: SPEC.md §6). */
  def hex(state: Array[Long]): String = UInt128.hex(state(1), state(0))
}
