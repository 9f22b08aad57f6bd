package io.dsha.aggregate

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionDescription}
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.trees.UnaryLike
import org.apache.spark.sql.types.{BinaryType, DataType}

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
    extends TypedImperativeAggregate[Option[DigestState.Portable]]
    with UnaryLike[Expression] {

  override def prettyName: String = "dsha_merge"
  override def nullable: Boolean = true
  override def dataType: DataType = BinaryType

  override def checkInputDataTypes(): TypeCheckResult = child.dataType match {
    case BinaryType => TypeCheckResult.TypeCheckSuccess
    case other =>
      TypeCheckResult.TypeCheckFailure(
        s"$prettyName takes a BINARY dsha state (from dsha_state), not ${other.sql}: ${child.sql}"
      )
  }

  override def createAggregationBuffer(): Option[DigestState.Portable] = None

  override def update(buffer: Option[DigestState.Portable], input: InternalRow): Option[DigestState.Portable] =
    child.eval(input) match {
      case null => buffer
      case bytes: Array[Byte] => merge(buffer, Some(DigestState.parse(bytes)))
    }

  override def merge(
      buffer: Option[DigestState.Portable],
      other: Option[DigestState.Portable]
  ): Option[DigestState.Portable] = (buffer, other) match {
    case (Some(a), Some(b)) => Some(a.merge(b))
    case _ => buffer.orElse(other)
  }

  override def eval(buffer: Option[DigestState.Portable]): Any = buffer.map(_.toBytes).orNull

  /** The buffer travels as the state's own bytes (none when it has seen no state). */
  override def serialize(buffer: Option[DigestState.Portable]): Array[Byte] =
    buffer.map(_.toBytes).getOrElse(Array.emptyByteArray)

  override def deserialize(bytes: Array[Byte]): Option[DigestState.Portable] =
    if (bytes.isEmpty) None else Some(DigestState.parse(bytes))

  override def withNewMutableAggBufferOffset(offset: Int): DshaMerge = copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): DshaMerge = copy(inputAggBufferOffset = offset)
  override protected def withNewChildInternal(newChild: Expression): DshaMerge = copy(child = newChild)
}
