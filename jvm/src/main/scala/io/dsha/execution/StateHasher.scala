package io.dsha.execution

import org.apache.spark.sql.catalyst.InternalRow

import io.dsha.aggregate.DigestState
import io.dsha.algorithm.Algorithm
import io.dsha.encoding.RowBytesWriter
import io.dsha.types.CanonicalSchema

/**
 * Hashes rows into digest states, one per [[StateHasher.Spec]], reading each row's values from its bytes: the
 * per-partition loop of [[PartialDshaExec]], and of anything else that digests rows as they pass (a write). One
 * instance per task; not thread-safe.
 */
final class StateHasher(specs: Seq[StateHasher.Spec]) {
  private val n = specs.size
  private val writers = specs.map(s => RowBytesWriter(s.schema.row, s.rowOrdinals, s.algorithm)).toArray
  private val hashers = specs.map(s => s.algorithm.newRowHasher(s.schema.digest)).toArray
  private val combiners = specs.map(_.algorithm.combiner).toArray
  private val offsets = combiners.scanLeft(0)(_ + _.words).toArray
  private val words = new Array[Long](offsets(n))
  private var count = 0L

  def add(row: InternalRow): Unit = {
    var i = 0
    while (i < n) {
      val h = hashers(i)
      h.startRow()
      writers(i).write(h, row)
      h.finishRow()
      combiners(i).add(words, offsets(i), h)
      i += 1
    }
    count += 1
  }

  def addAll(rows: Iterator[InternalRow]): this.type = {
    while (rows.hasNext) add(rows.next())
    this
  }

  def rows: Long = count

  def states: Seq[DigestState] =
    (0 until n).map(i => new DigestState(count, java.util.Arrays.copyOfRange(words, offsets(i), offsets(i + 1))))
}

object StateHasher {

  /** One digest: the canonical schema of its arguments and, per argument, the input column that holds it. */
  final case class Spec(schema: CanonicalSchema, rowOrdinals: IndexedSeq[Int], algorithm: Algorithm)
}
