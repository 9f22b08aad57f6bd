package io.dsha.aggregate

import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(state) - Merges dsha states (from dsha_state or _FUNC_) into the state of all their rows, as BINARY (layout in
      SPEC.md §11). The states must be of the same algorithm and canonical schema: otherwise an error names both. NULL
      states are skipped; over no rows, or only NULLs, the result is NULL (the schema is unknown).
  """,
  arguments = """
    Arguments:
      * state - a BINARY dsha state.
  """,
  examples = """
    Examples:
      > SELECT dsha_final(_FUNC_(s)) = (SELECT dsha(*) FROM range(10)) FROM (SELECT dsha_state(*) AS s FROM range(10) GROUP BY id % 3);
       true
  """,
  group = "agg_funcs",
  since = "0.1.0"
)
// scalastyle:on line.size.limit
case class DshaMerge(child: Expression, mutableAggBufferOffset: Int = 0, inputAggBufferOffset: Int = 0)
    extends BytesMerge[DigestState.Portable] {

  override def prettyName: String = "dsha_merge"
  override protected def takes: String = "a BINARY dsha state (from dsha_state)"
  override protected def parse(bytes: Array[Byte]): DigestState.Portable = DigestState.parse(bytes)
  override protected def bytesOf(value: DigestState.Portable): Array[Byte] = value.toBytes
  override protected def add(buffer: DigestState.Portable, other: DigestState.Portable): DigestState.Portable =
    buffer.merge(other)

  override def withNewMutableAggBufferOffset(offset: Int): DshaMerge = copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): DshaMerge = copy(inputAggBufferOffset = offset)
  override protected def withNewChildInternal(newChild: Expression): DshaMerge = copy(child = newChild)
}
