package io.dsha.util

import java.security.MessageDigest

/**
 * Key bytes that never print: `toString` is `<key>`, so plans, logs and errors that show the value holding it show no
 * key. Travels to executors inside the plan (Java serialisation), as any argument of a query does.
 */
final class Secret private (private val key: Array[Byte]) extends Serializable {
  def bytes: Array[Byte] = key.clone()
  def length: Int = key.length
  override def toString: String = "<key>"
  override def equals(other: Any): Boolean = other match {
    case s: Secret => MessageDigest.isEqual(key, s.key)
    case _ => false
  }
  override def hashCode: Int = 0
}

object Secret {
  val MinBytes = 16

  /** A key of at least [[MinBytes]] bytes; `what` names it in the error (never its value). */
  def apply(key: Array[Byte], what: String): Secret = {
    if (key.length < MinBytes) {
      throw new IllegalArgumentException(
        s"$what is ${key.length} bytes; a key needs at least $MinBytes (32 random bytes are recommended)"
      )
    }
    new Secret(key.clone())
  }

  private val Hex = "^(?:[0-9a-fA-F]{2})+$".r.pattern
  private val Base64 = "^[A-Za-z0-9+/_-]+={0,2}$".r.pattern

  /**
   * A key written as text (SPEC.md §16.2): hexadecimal if it is valid hex, else base64 (standard or URL-safe, padding
   * optional). Errors say what is wrong and how long the text is, never the text.
   */
  def parse(text: String, what: String): Secret = {
    val t = text.trim
    val bytes =
      if (Hex.matcher(t).matches()) {
        t.grouped(2).map(Integer.parseInt(_, 16).toByte).toArray
      } else if (Base64.matcher(t).matches()) {
        val unpadded = t.replace("=", "").replace('-', '+').replace('_', '/')
        try java.util.Base64.getDecoder.decode(unpadded + "=" * ((4 - unpadded.length % 4) % 4))
        catch {
          case _: IllegalArgumentException =>
            throw new IllegalArgumentException(s"$what (${t.length} characters) is neither hex nor base64")
        }
      } else {
        throw new IllegalArgumentException(s"$what (${t.length} characters) is neither hex nor base64")
      }
    apply(bytes, what)
  }
}
