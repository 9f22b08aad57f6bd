package io.dsha.aggregate

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.spark.sql.catalyst.expressions.AttributeReference
import org.apache.spark.sql.types.LongType

import io.dsha.algorithm.{Algorithm, Combiner}
import io.dsha.types.CanonicalSchema
import io.dsha.util.Bytes

/**
 * The state of a digest over some rows: the row count and the combiner's words. Its layout as an aggregation buffer
 * (`rows`, then the combiner's words, all BIGINT NOT NULL) is declared here once, for the aggregates and for the
 * execution code that produces their partial buffers; so is its byte layout as a value ([[DigestState.Portable]],
 * SPEC.md §11), what `dsha_state` returns and `dsha_merge` / `dsha_final` read.
 */
final class DigestState(val rows: Long, val words: Array[Long]) {
  def bufferValues: Seq[Any] = rows +: words.toSeq
}

object DigestState {
  def bufferNames(combiner: Combiner): Seq[String] = "rows" +: combiner.wordNames

  /** The state of no rows: the identity of merging. */
  def zero(algorithm: Algorithm): DigestState = new DigestState(0L, new Array[Long](algorithm.combiner.words))

  def bufferAttributes(combiner: Combiner): Seq[AttributeReference] =
    bufferNames(combiner).map(AttributeReference(_, LongType, nullable = false)())

  /** The first bytes of every serialised state: "DSHS" (dsha state), then the format version. */
  val Magic: Array[Byte] = "DSHS".getBytes(UTF_8)
  val FormatVersion: Int = 1

  /** A state that says what it is a state of: its algorithm and the canonical schema (text and digest). */
  final case class Portable(algorithm: Algorithm, schemaText: String, schemaDigest: Array[Byte], state: DigestState) {
    def rows: Long = state.rows
    def words: Array[Long] = state.words

    /** SPEC.md §11: magic, version, varint algorithm code, then length-prefixed digest, state, schema; LE. */
    def toBytes: Array[Byte] = {
      val text = schemaText.getBytes(UTF_8)
      val out = new ByteArrayOutputStream(Magic.length + 1 + 6 + 4 + schemaDigest.length + 8 + 4 + 8 * words.length +
        4 + text.length)
      out.write(Magic)
      out.write(FormatVersion)
      Bytes.writeVarint(out, algorithm.multihashCode.toLong)
      Bytes.writeIntLE(out, schemaDigest.length)
      out.write(schemaDigest)
      Bytes.writeLongLE(out, rows)
      Bytes.writeIntLE(out, 8 * words.length)
      words.foreach(Bytes.writeLongLE(out, _))
      Bytes.writeIntLE(out, text.length)
      out.write(text)
      out.toByteArray
    }

    /** The state of both sets of rows; an error naming both when they are states of different digests. */
    def merge(other: Portable): Portable = {
      if (other.algorithm.id != algorithm.id) {
        throw new IllegalArgumentException(
          s"cannot merge dsha states of different algorithms: ${algorithm.id} and ${other.algorithm.id}"
        )
      }
      if (!java.util.Arrays.equals(other.schemaDigest, schemaDigest)) {
        throw new IllegalArgumentException(
          s"cannot merge dsha states of different schemas: $schemaText and ${other.schemaText}"
        )
      }
      val sum = words.clone()
      algorithm.combiner.merge(sum, 0, other.words, 0)
      copy(state = new DigestState(rows + other.rows, sum))
    }
  }

  object Portable {
    def apply(algorithm: Algorithm, schema: CanonicalSchema, rows: Long, words: Array[Long]): Portable =
      Portable(algorithm, schema.text, schema.digest, new DigestState(rows, words))

    /** The state of no rows of `schema`. */
    def zero(algorithm: Algorithm, schema: CanonicalSchema): Portable =
      Portable(algorithm, schema.text, schema.digest, DigestState.zero(algorithm))
  }

  /** A byte array that is not a serialised dsha state, with what is wrong with it. */
  final class Malformed(reason: String) extends IllegalArgumentException(s"malformed dsha state: $reason")

  /** Reads a serialised state (SPEC.md §11), checking every length, the algorithm and the schema digest. */
  def parse(bytes: Array[Byte]): Portable = new Reader(bytes).portable()

  private def utf8(text: Array[Byte]): String =
    try UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(text)).toString
    catch {
      case e: java.nio.charset.CharacterCodingException =>
        throw new Malformed(s"the schema text is not valid UTF-8 (${e.getMessage})")
    }

  private final class Reader(bytes: Array[Byte]) {
    private var at = 0

    private def need(n: Long, what: String): Unit =
      if (n > bytes.length - at) {
        throw new Malformed(s"truncated: $what needs $n bytes at offset $at, but the state has ${bytes.length} bytes")
      }

    private def take(n: Int, what: String): Array[Byte] = {
      need(n.toLong, what)
      val out = java.util.Arrays.copyOfRange(bytes, at, at + n)
      at += n
      out
    }

    private def u8(what: String): Int = take(1, what)(0) & 0xff

    private def le(n: Int, what: String): Long = {
      val b = take(n, what)
      (0 until n).foldLeft(0L)((v, i) => v | ((b(i) & 0xffL) << (8 * i)))
    }

    private def length(what: String): Int = {
      val n = le(4, s"the length of $what")
      need(n, what)
      n.toInt
    }

    private def varint(what: String): Long = {
      var value = 0L
      var shift = 0
      var b = 0x80
      while ((b & 0x80) != 0) {
        if (shift > 56) throw new Malformed(s"$what is a varint longer than 9 bytes")
        b = u8(what)
        value |= (b & 0x7fL) << shift
        shift += 7
      }
      if (b == 0 && shift > 7) throw new Malformed(s"$what is not a minimal varint (a trailing 0x00 byte)")
      value
    }

    def portable(): Portable = {
      need(Magic.length.toLong, "the magic \"DSHS\"")
      if (!java.util.Arrays.equals(take(Magic.length, "magic"), Magic)) {
        throw new Malformed(
          s"bad magic: a state starts with the bytes of 'DSHS' (${Bytes.hex(Magic)}), this one with " +
            Bytes.hex(bytes.take(Magic.length))
        )
      }
      val version = u8("the format version")
      if (version != FormatVersion) {
        throw new Malformed(s"format version $version is not supported (this dsha reads version $FormatVersion)")
      }
      val code = varint("the algorithm code")
      val algorithm = Algorithm.all.find(_.multihashCode == code).getOrElse(
        throw new Malformed(
          f"unknown algorithm code 0x$code%x (known: ${Algorithm.all.map(a => f"${a.id} 0x${a.multihashCode}%x").mkString(", ")})"
        )
      )
      val digest = take(length("the schema digest"), "the schema digest")
      if (digest.length != 32) throw new Malformed(s"the schema digest has ${digest.length} bytes, not 32")
      val rows = le(8, "the row count")
      val stateBytes = length("the combiner state")
      val words = algorithm.combiner.words
      if (stateBytes != 8 * words) {
        throw new Malformed(s"the combiner state of ${algorithm.id} has ${8 * words} bytes, not $stateBytes")
      }
      val state = Array.fill(words)(le(8, "the combiner state"))
      val text = take(length("the schema text"), "the schema text")
      if (at != bytes.length) throw new Malformed(s"${bytes.length - at} bytes after the end of the state")
      if (!java.util.Arrays.equals(Bytes.sha256(text), digest)) {
        throw new Malformed(
          s"the schema text does not match its digest (SHA-256 of the text is ${Bytes.hex(Bytes.sha256(text))}, " +
            s"the state says ${Bytes.hex(digest)})"
        )
      }
      Portable(algorithm, utf8(text), digest, new DigestState(rows, state))
    }
  }
}
