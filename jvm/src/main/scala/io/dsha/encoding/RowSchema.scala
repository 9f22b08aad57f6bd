package io.dsha.encoding

import java.nio.charset.StandardCharsets.UTF_8
import java.security.MessageDigest

import io.dsha.hash.Murmur3x64Stream

/**
 * The canonical schema of a row (its columns by name, in canonical order) and what the algorithm derives from it: the
 * schema digest, and the MurmurHash3 state after absorbing that digest, which starts every row's stream.
 */
final case class RowSchema(encoding: Encoding.Struct) {
  val canonical: String = encoding.canonicalType
  val digest: Array[Byte] = RowSchema.sha256(canonical.getBytes(UTF_8))

  val (prefixH1: Long, prefixH2: Long, prefixLength: Long) = {
    val h = new Murmur3x64Stream
    h.reset()
    h.putBytes(digest)
    (h.stateH1(), h.stateH2(), h.length())
  }

  def digestHex: String = RowSchema.hex(digest)
}

object RowSchema {
  def sha256(bytes: Array[Byte]): Array[Byte] = MessageDigest.getInstance("SHA-256").digest(bytes)

  def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString
}
