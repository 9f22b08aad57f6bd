package io.dsha.aggregate

import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

import io.dsha.sketch.Sketch

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(sketch) - Merges dsha sketches (from dsha_sketch or _FUNC_) into the sketch of all their rows, as BINARY (layout
      in SPEC.md §17.1): cells, rows, digest state and column states added, so the bytes are those of one dsha_sketch
      over all the rows. The sketches must be of the same schema, cell count and column digests: otherwise an error.
      NULL sketches are skipped; over no rows, or only NULLs, the result is NULL. A merge tree of these (sketches
      grouped by partition, then merged) bounds what one task receives when a table has many partitions.
  """,
  arguments = """
    Arguments:
      * sketch - a BINARY dsha sketch.
  """,
  examples = """
    Examples:
      > SELECT _FUNC_(s) = (SELECT dsha_sketch(*) FROM range(10)) FROM (SELECT dsha_sketch(*) AS s FROM range(10) GROUP BY id % 3);
       true
  """,
  group = "agg_funcs",
  since = "0.1.0"
)
// scalastyle:on line.size.limit
case class DshaSketchMerge(child: Expression, mutableAggBufferOffset: Int = 0, inputAggBufferOffset: Int = 0)
    extends BytesMerge[Sketch] {

  override def prettyName: String = "dsha_sketch_merge"
  override protected def takes: String = "a BINARY dsha sketch (from dsha_sketch)"
  override protected def parse(bytes: Array[Byte]): Sketch = Sketch.parse(bytes)
  override protected def bytesOf(value: Sketch): Array[Byte] = value.toBytes
  override protected def add(buffer: Sketch, other: Sketch): Sketch = buffer.merge(other)

  override def withNewMutableAggBufferOffset(offset: Int): DshaSketchMerge = copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): DshaSketchMerge = copy(inputAggBufferOffset = offset)
  override protected def withNewChildInternal(newChild: Expression): DshaSketchMerge = copy(child = newChild)
}
