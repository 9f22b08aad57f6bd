package io.dsha.expressions

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.types.BinaryType

/** A constant BINARY argument (the digests of logical_hash_in, the words of logical_filter_word_in), read once. */
object ConstantBytes {

  /** Builds `function(bytes, columns...)`: the constant first (see [[read]]), then at least one column. */
  def build[T](function: String, what: String, args: Seq[Expression])(make: (Seq[Expression], Array[Byte]) => T): T =
    args match {
      case first +: columns if columns.nonEmpty => make(columns, read(function, what, first))
      case _ => throw new IllegalArgumentException(s"$function takes $what, then the columns to hash")
    }

  /** The bytes of `e`, which `function` takes as `what`: an error naming both unless a non-NULL constant BINARY. */
  def read(function: String, what: String, e: Expression): Array[Byte] = {
    if (!e.foldable || e.dataType != BinaryType) {
      throw new IllegalArgumentException(
        s"$function takes $what first, as a constant BINARY, not ${e.dataType.sql}" +
          (if (e.foldable) "" else " computed per row")
      )
    }
    e.eval() match {
      case b: Array[Byte] => b
      case null => throw new IllegalArgumentException(s"$function: $what are NULL")
    }
  }
}
