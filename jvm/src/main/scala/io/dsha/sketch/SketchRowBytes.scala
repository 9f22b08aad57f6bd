package io.dsha.sketch

import org.apache.spark.sql.catalyst.InternalRow

import io.dsha.algorithm.{DshaV1, RowHasher}
import io.dsha.encoding.RowBytesWriter
import io.dsha.types.CanonicalSchema

/**
 * Adds rows to a sketch reading their values straight from an UnsafeRow's bytes (as dsha's partial step does): the
 * row digest, then each column's digest alone. One instance per task; not thread-safe.
 *
 * @param digests the row's canonical schema, then each column digest's (one column each)
 * @param columns per digest, per argument position of its schema, the input column that holds it
 */
final class SketchRowBytes(digests: Seq[CanonicalSchema], columns: Seq[IndexedSeq[Int]]) {
  private val writers = digests.zip(columns).map { case (s, c) => RowBytesWriter(s.row, c, DshaV1) }.toArray
  private val hashers: Array[RowHasher] = digests.map(s => DshaV1.newRowHasher(s.digest): RowHasher).toArray

  def add(sketch: Sketch, row: InternalRow): Unit = {
    var i = 0
    while (i < writers.length) {
      val h = hashers(i)
      h.startRow()
      writers(i).write(h, row)
      h.finishRow()
      if (i == 0) sketch.addRow(h.digestWord(0), h.digestWord(1))
      else sketch.addColumn(i - 1, h.digestWord(0), h.digestWord(1))
      i += 1
    }
  }
}
