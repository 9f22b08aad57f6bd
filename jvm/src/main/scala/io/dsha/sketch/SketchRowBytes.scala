package io.dsha.sketch

import org.apache.spark.sql.catalyst.InternalRow

import io.dsha.algorithm.{DshaV1, RowHasher}
import io.dsha.encoding.RowBytesWriter
import io.dsha.types.CanonicalSchema
import io.dsha.types.CanonicalType.StructOf

/**
 * Adds rows to a sketch reading their values straight from an UnsafeRow's bytes (as dsha's partial step does): the
 * row digest and filter word, then each column's digest alone. One instance per task; not thread-safe.
 *
 * @param digests the row's canonical schema, then each column digest's (one column each)
 * @param columns per digest, per argument position of its schema, the input column that holds it
 * @param rowType the canonical row type of the arguments (for the filter word)
 */
final class SketchRowBytes(digests: Seq[CanonicalSchema], columns: Seq[IndexedSeq[Int]], rowType: StructOf) {
  private val writers = digests.zip(columns).map { case (s, c) => RowBytesWriter(s.row, c, DshaV1) }.toArray
  private val hashers: Array[RowHasher] = digests.map(s => DshaV1.newRowHasher(s.digest): RowHasher).toArray
  private val filterWord = FilterWordReader(rowType, columns.head)

  def add(sketch: Sketch, row: InternalRow): Unit = {
    var i = 0
    while (i < writers.length) {
      val h = hashers(i)
      h.startRow()
      writers(i).write(h, row)
      h.finishRow()
      if (i == 0) sketch.addRow(h.digestWord(0), h.digestWord(1), filterWord.word(row))
      else sketch.addColumn(i - 1, h.digestWord(0), h.digestWord(1))
      i += 1
    }
  }
}
