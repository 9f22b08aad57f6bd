package io.dsha.registration

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{BinaryType, StringType}
import org.apache.spark.unsafe.types.UTF8String

import io.dsha.util.Secret

/**
 * The key argument of the keyed functions (SPEC.md §16.2), read once when the query is analysed: a constant BINARY,
 * a STRING in hex or base64, or `conf:NAME` for the session setting NAME. From then on the key lives in the
 * algorithm, outside the plan's expressions. Errors name the function and the setting, never the key.
 */
object KeyArgument {
  val ConfPrefix = "conf:"

  def read(function: String, key: Expression): Secret = {
    val what = s"the key of $function"
    if (!key.foldable) {
      throw new IllegalArgumentException(
        s"$what must be a constant: BINARY, a hex or base64 STRING, or '${ConfPrefix}NAME' for a session setting"
      )
    }
    (key.dataType, key.eval()) match {
      case (_, null) => throw new IllegalArgumentException(s"$what is NULL")
      case (BinaryType, bytes: Array[Byte]) => Secret(bytes, what)
      case (_: StringType, text: UTF8String) =>
        val s = text.toString
        if (s.startsWith(ConfPrefix)) {
          val name = s.substring(ConfPrefix.length).trim
          val value = SQLConf.get.getConfString(name, null)
          if (value == null)
            throw new IllegalArgumentException(s"$what names the session setting '$name', which is not set")
          Secret.parse(value, s"$what (session setting '$name')")
        } else {
          Secret.parse(s, what)
        }
      case (other, _) =>
        throw new IllegalArgumentException(s"$what must be BINARY or STRING, not ${other.sql}")
    }
  }
}
