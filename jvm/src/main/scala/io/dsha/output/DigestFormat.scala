package io.dsha.output

import java.io.ByteArrayOutputStream

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.dsha.algorithm.Algorithm
import io.dsha.util.Bytes

/**
 * The output forms of a final digest (SPEC.md §6): a multihash carrying the algorithm's code, printed in multibase
 * base16, and the fingerprint struct with every part the digest is made of.
 */
object DigestFormat {

  /** varint(code) || varint(length) || digest, varints as the multiformats unsigned varint. */
  def multihash(algorithm: Algorithm, digest: Array[Byte]): Array[Byte] = multihash(algorithm.multihashCode, digest)

  /** The same for a multihash code that is not a digest algorithm's (an approximate fingerprint's). */
  def multihash(code: Int, digest: Array[Byte]): Array[Byte] = {
    val out = new ByteArrayOutputStream(digest.length + 6)
    Bytes.writeVarint(out, code.toLong)
    Bytes.writeVarint(out, digest.length.toLong)
    out.write(digest)
    out.toByteArray
  }

  /** Multibase base16 lower case: the prefix "f", then two hex digits per byte. */
  def multibase(multihash: Array[Byte]): String = "f" + Bytes.hex(multihash)

  def digestString(algorithm: Algorithm, schemaDigest: Array[Byte], rows: Long, words: Array[Long]): UTF8String =
    UTF8String.fromString(multibase(multihash(algorithm, algorithm.finalDigest(schemaDigest, rows, words))))

  val FingerprintType: StructType = StructType(Seq(
    StructField("digest", StringType, nullable = false),
    StructField("rows", LongType, nullable = false),
    StructField("schema_digest", StringType, nullable = false),
    StructField("content_sum", StringType, nullable = false),
    StructField("schema", StringType, nullable = false),
    StructField("algorithm", StringType, nullable = false),
    StructField("multihash", BinaryType, nullable = false)
  ))

  /** Everything the digest is made of, so that two fingerprints can say which part differs. */
  def fingerprint(
      algorithm: Algorithm,
      schemaText: String,
      schemaDigest: Array[Byte],
      rows: Long,
      words: Array[Long]
  ): InternalRow = {
    val mh = multihash(algorithm, algorithm.finalDigest(schemaDigest, rows, words))
    new GenericInternalRow(Array[Any](
      UTF8String.fromString(multibase(mh)),
      rows,
      UTF8String.fromString(Bytes.hex(schemaDigest)),
      UTF8String.fromString(algorithm.combiner.hex(words)),
      UTF8String.fromString(schemaText),
      UTF8String.fromString(algorithm.id),
      mh
    ))
  }
}
