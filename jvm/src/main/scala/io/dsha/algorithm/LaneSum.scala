package io.dsha.algorithm

import org.apache.spark.sql.catalyst.expressions.Expression

import io.dsha.algorithm.secure.LaneRowHasher
import io.dsha.expressions.{RowDigestWord, WrappingAdd}

/**
 * Lane-wise sums mod 2^64 of `lanes` lanes (LtHash: dsha-secure-v1's 512, SPEC.md §16.3; dsha-secure-v2's 256, §16.7):
 * no carries between lanes.
 */
final case class LaneSum(lanes: Int) extends Combiner {
  val wordNames: Seq[String] = (0 until lanes).map(i => s"lane_$i")

  def add(state: Array[Long], at: Int, row: RowHasher): Unit = row match {
    case lt: LaneRowHasher => lt.addLanesTo(state, at)
    case other =>
      var i = 0
      while (i < lanes) {
        state(at + i) += other.digestWord(i)
        i += 1
      }
  }

  def merge(state: Array[Long], at: Int, other: Array[Long], otherAt: Int): Unit = {
    var i = 0
    while (i < lanes) {
      state(at + i) += other(otherAt + i)
      i += 1
    }
  }

  def updateExpressions(state: Seq[Expression], row: Expression): Seq[Expression] =
    state.indices.map(i => WrappingAdd(state(i), RowDigestWord(row, i)))

  def mergeExpressions(left: Seq[Expression], right: Seq[Expression]): Seq[Expression] =
    left.indices.map(i => WrappingAdd(left(i), right(i)))

  /** The state bytes (each lane little-endian) in byte order. */
  def hex(state: Array[Long]): String = {
    val sb = new StringBuilder(16 * state.length)
    state.foreach(w => (0 until 8).foreach(k => sb.append(f"${(w >>> (8 * k)) & 0xff}%02x")))
    sb.toString
  }
}
