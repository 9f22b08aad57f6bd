package io.dsha.aggregate

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.catalyst.trees.UnaryLike
import org.apache.spark.sql.types.{BinaryType, DataType}

/**
 * The merge of BINARY values that add (states: `dsha_merge`; sketches: `dsha_sketch_merge`): NULLs skipped, NULL over
 * none; the buffer travels as the value's own bytes (none when it has seen no value).
 */
trait BytesMerge[T] extends TypedImperativeAggregate[Option[T]] with UnaryLike[Expression] {

  /** What the argument must be, for the type error: "a BINARY dsha state (from dsha_state)". */
  protected def takes: String
  protected def parse(bytes: Array[Byte]): T
  protected def bytesOf(value: T): Array[Byte]
  protected def add(buffer: T, other: T): T

  override def nullable: Boolean = true
  override def dataType: DataType = BinaryType

  override def checkInputDataTypes(): TypeCheckResult = child.dataType match {
    case BinaryType => TypeCheckResult.TypeCheckSuccess
    case other => TypeCheckResult.TypeCheckFailure(s"$prettyName takes $takes, not ${other.sql}: ${child.sql}")
  }

  override def createAggregationBuffer(): Option[T] = None

  override def update(buffer: Option[T], input: InternalRow): Option[T] = child.eval(input) match {
    case null => buffer
    case bytes: Array[Byte] => merge(buffer, Some(parse(bytes)))
  }

  override def merge(buffer: Option[T], other: Option[T]): Option[T] = (buffer, other) match {
    case (Some(a), Some(b)) => Some(add(a, b))
    case _ => buffer.orElse(other)
  }

  override def eval(buffer: Option[T]): Any = buffer.map(bytesOf).orNull

  override def serialize(buffer: Option[T]): Array[Byte] = buffer.map(bytesOf).getOrElse(Array.emptyByteArray)

  override def deserialize(bytes: Array[Byte]): Option[T] = if (bytes.isEmpty) None else Some(parse(bytes))
}
