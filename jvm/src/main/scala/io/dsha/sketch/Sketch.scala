package io.dsha.sketch

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8

import io.dsha.algorithm.{DshaV1, Sum128}
import io.dsha.output.DigestFormat
import io.dsha.util.Bytes

/**
 * A dsha sketch (SPEC.md §17): the rows of a table as the cells of an invertible Bloom lookup table over their dsha-v1
 * row digests, with the row count and the canonical schema, so that sketches of two tables can be subtracted and
 * decoded into the rows that differ. Its byte layout, what `dsha_sketch` returns, is defined here once. Mutable: it is
 * an aggregation buffer.
 */
final class Sketch(
    val schemaText: String,
    val schemaDigest: Array[Byte],
    var rows: Long,
    val sum: Array[Long],
    table: SketchCells,
    val columns: IndexedSeq[Sketch.Column],
    val columnSums: Array[Long],
    private var filtered: Boolean
) {

  /** Whether the cells hold the rows' filter words (SPEC.md §17.2.1): format version 2, not a sketch read as 1. */
  def hasFilters: Boolean = filtered

  def cellCount: Int = table.cells

  // Row digests not yet in the cells: added a batch at a time (SketchCells.addAll), before anything reads the cells.
  private val pendingLo = new Array[Long](Sketch.Batch)
  private val pendingHi = new Array[Long](Sketch.Batch)
  private val pendingFilter = new Array[Long](Sketch.Batch)
  private var pending = 0

  /** The cells, with every row added so far. */
  def cells: SketchCells = {
    flush()
    table
  }

  private def flush(): Unit =
    if (pending > 0) {
      table.addAll(pendingLo, pendingHi, pendingFilter, pending)
      pending = 0
    }

  /**
   * Adds a row: `words` holds its row digest (low, high), its filter word, then each column's digest alone, in column
   * order.
   */
  def add(words: org.apache.spark.sql.catalyst.InternalRow): Unit = {
    addRow(words.getLong(0), words.getLong(1), words.getLong(2))
    var c = 0
    while (c < columns.length) {
      addColumn(c, words.getLong(3 + 2 * c), words.getLong(4 + 2 * c))
      c += 1
    }
  }

  /** Adds one row by its digest's words and its filter word (then its columns' digests by [[addColumn]]). */
  def addRow(lo: Long, hi: Long, filter: Long): Unit = {
    pendingLo(pending) = lo
    pendingHi(pending) = hi
    pendingFilter(pending) = filter
    pending += 1
    if (pending == Sketch.Batch) flush()
    Sum128.addWords(sum, 0, lo, hi)
    rows += 1
  }

  def addColumn(c: Int, lo: Long, hi: Long): Unit = Sum128.addWords(columnSums, 2 * c, lo, hi)

  /** The dsha-v1 digest of the rows (what `dsha` gives): a sketch holds the table's digest state. */
  def digest: String = DigestFormat.digestString(DshaV1, schemaDigest, rows, sum).toString

  /** The dsha-v1 digest of column `c` alone (what `dsha(column)` gives). */
  def columnDigest(c: Int): String =
    DigestFormat.digestString(DshaV1, columns(c).schemaDigest, rows, columnSums.slice(2 * c, 2 * c + 2)).toString

  /** Adds the rows of `other` (partial aggregation): same schema, same cell count. */
  def merge(other: Sketch): Sketch = {
    requireSameSchema(other, "merge")
    if (other.cellCount != cellCount) {
      throw new IllegalArgumentException(s"cannot merge dsha sketches of $cellCount and ${other.cellCount} cells")
    }
    if (other.columns.map(_.name) != columns.map(_.name)) {
      throw new IllegalArgumentException(
        "cannot merge a dsha sketch with column digests and one without (spark.dsha.sketch.columnDigests differs)"
      )
    }
    cells.combine(other.cells, 1)
    filtered &&= other.hasFilters
    rows += other.rows
    Sum128.merge(sum, 0, other.sum, 0)
    var c = 0
    while (c < columns.length) {
      Sum128.merge(columnSums, 2 * c, other.columnSums, 2 * c)
      c += 1
    }
    this
  }

  /**
   * This sketch minus `other`, both folded to the largest size that divides both (their greatest common divisor). Its
   * filter words mean something only when both sketches have them.
   */
  def minus(other: Sketch): SketchCells = {
    requireSameSchema(other, "compare")
    val m = java.math.BigInteger.valueOf(cellCount.toLong).gcd(java.math.BigInteger.valueOf(other.cellCount.toLong))
    val diff = cells.fold(m.intValue())
    diff.combine(other.cells.fold(m.intValue()), -1)
    diff
  }

  private def requireSameSchema(other: Sketch, what: String): Unit =
    if (!java.util.Arrays.equals(schemaDigest, other.schemaDigest)) {
      throw new IllegalArgumentException(
        s"cannot $what dsha sketches of different schemas: $schemaText and ${other.schemaText}"
      )
    }

  /**
   * SPEC.md §17.1: magic, version, algorithm, schema digest, rows, sum, cell count, cells, columns (name, schema
   * digest, sum), schema; little-endian. Format version 2, or 1 (cells without filter words) when it has none.
   */
  def toBytes: Array[Byte] = {
    val text = schemaText.getBytes(UTF_8)
    val words = if (filtered) cells.words else cells.wordsV1()
    val out = new ByteArrayOutputStream(128 + 8 * words.length + 64 * columns.length + text.length)
    out.write(Sketch.Magic)
    out.write(if (filtered) Sketch.FormatVersion else 1)
    Bytes.writeVarint(out, DshaV1.multihashCode.toLong)
    Bytes.writeIntLE(out, schemaDigest.length)
    out.write(schemaDigest)
    Bytes.writeLongLE(out, rows)
    sum.foreach(Bytes.writeLongLE(out, _))
    Bytes.writeIntLE(out, cellCount)
    val buf = java.nio.ByteBuffer.allocate(8 * words.length).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    buf.asLongBuffer().put(words)
    out.write(buf.array())
    Bytes.writeIntLE(out, columns.length)
    columns.zipWithIndex.foreach { case (col, c) =>
      val name = col.name.getBytes(UTF_8)
      Bytes.writeIntLE(out, name.length)
      out.write(name)
      out.write(col.schemaDigest)
      Bytes.writeLongLE(out, columnSums(2 * c))
      Bytes.writeLongLE(out, columnSums(2 * c + 1))
    }
    Bytes.writeIntLE(out, text.length)
    out.write(text)
    out.toByteArray
  }
}

object Sketch {

  /** A column of the sketched rows: its name and the schema digest of the one-column table it is alone. */
  final case class Column(name: String, schemaDigest: Array[Byte])
  val Magic: Array[Byte] = "DSHK".getBytes(UTF_8)

  /** The format written (2: cells with filter words); version 1 is read too. */
  val FormatVersion: Int = 2

  /** Row digests added to the cells together: enough for the updates' cache misses to overlap, small enough for L1. */
  private val Batch = 256

  /** Cells of `dsha_sketch` when the setting is absent (3·2^14, 2.25 MiB): decodes about 35,000 differing digests. */
  val DefaultCells: Int = 49152
  val CellsSetting = "spark.dsha.sketch.cells"
  val ColumnsSetting = "spark.dsha.sketch.columnDigests"
  val MaxCells: Int = 1 << 24

  def checkCells(cells: Long, where: String): Int = {
    if (cells < 1 || cells > MaxCells || !SketchCells.validSize(cells)) {
      throw new IllegalArgumentException(
        s"$where must be a number of cells 2^i or 3·2^i (1, 2, 3, 4, 6, 8, 12, ... 49152, 65536, ...) up to $MaxCells, " +
          s"not $cells"
      )
    }
    cells.toInt
  }

  def empty(schemaText: String, schemaDigest: Array[Byte], cells: Int, columns: IndexedSeq[Column]): Sketch =
    new Sketch(
      schemaText,
      schemaDigest,
      0L,
      new Array[Long](2),
      new SketchCells(cells),
      columns,
      new Array[Long](2 * columns.length),
      true
    )

  final class Malformed(reason: String) extends IllegalArgumentException(s"malformed dsha sketch: $reason")

  def parse(bytes: Array[Byte]): Sketch = {
    val b = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    def need(n: Long, what: String): Unit =
      if (n > b.remaining()) {
        throw new Malformed(
          s"truncated: $what needs $n bytes at offset ${b.position()}, the sketch has ${bytes.length}"
        )
      }
    need(Magic.length + 1L, "the magic \"DSHK\" and version")
    val magic = new Array[Byte](Magic.length)
    b.get(magic)
    if (!java.util.Arrays.equals(magic, Magic)) {
      throw new Malformed(
        s"bad magic: a sketch starts with 'DSHK' (${Bytes.hex(Magic)}), this one with ${Bytes.hex(magic)}"
      )
    }
    val version = b.get() & 0xff
    if (version != 1 && version != FormatVersion)
      throw new Malformed(s"format version $version is not supported (reads 1 and $FormatVersion)")
    val cellWords = if (version == 1) SketchCells.WORDS_V1 else SketchCells.WORDS
    var code = 0L
    var shift = 0
    var byte = 0x80
    while ((byte & 0x80) != 0) {
      need(1, "the algorithm code")
      if (shift > 56) throw new Malformed("the algorithm code is a varint longer than 9 bytes")
      byte = b.get() & 0xff
      code |= (byte & 0x7fL) << shift
      shift += 7
    }
    if (code != DshaV1.multihashCode) {
      throw new Malformed(
        f"algorithm code 0x$code%x: sketches are of dsha-v1 row digests (0x${DshaV1.multihashCode}%x)"
      )
    }
    need(4, "the schema digest length")
    val digestLength = b.getInt()
    if (digestLength != 32) throw new Malformed(s"the schema digest has $digestLength bytes, not 32")
    need(32 + 8 + 16 + 4, "the schema digest, rows, sum and cell count")
    val digest = new Array[Byte](32)
    b.get(digest)
    val rows = b.getLong()
    val sum = Array(b.getLong(), b.getLong())
    val m = b.getInt()
    if (m < 1 || m > MaxCells || !SketchCells.validSize(m.toLong)) {
      throw new Malformed(s"cell count $m is not 2^i or 3·2^i up to $MaxCells")
    }
    need(8L * cellWords * m, s"$m cells")
    val words = new Array[Long](cellWords * m)
    b.asLongBuffer().get(words)
    b.position(b.position() + 8 * words.length)
    need(4, "the column count")
    val n = b.getInt()
    if (n < 0 || n > 1000000) throw new Malformed(s"column count $n")
    val columnSums = new Array[Long](2 * n)
    val columns = (0 until n).map { c =>
      need(4, "a column name's length")
      val length = b.getInt()
      if (length < 0) throw new Malformed(s"column name length $length")
      need(length + 32L + 16L, "a column")
      val name = new Array[Byte](length)
      b.get(name)
      val columnDigest = new Array[Byte](32)
      b.get(columnDigest)
      columnSums(2 * c) = b.getLong()
      columnSums(2 * c + 1) = b.getLong()
      Column(new String(name, UTF_8), columnDigest)
    }
    need(4, "the schema length")
    val textLength = b.getInt()
    if (textLength < 0) throw new Malformed(s"schema length $textLength")
    need(textLength.toLong, "the schema")
    val text = new Array[Byte](textLength)
    b.get(text)
    if (b.remaining() != 0) throw new Malformed(s"${b.remaining()} bytes after the end of the sketch")
    if (!java.util.Arrays.equals(Bytes.sha256(text), digest)) {
      throw new Malformed("the schema text does not match its digest")
    }
    val cells = if (version == 1) SketchCells.fromV1(m, words) else new SketchCells(m, words)
    new Sketch(new String(text, UTF_8), digest, rows, sum, cells, columns, columnSums, version != 1)
  }
}
