package io.dsha.output

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.US_ASCII

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.dsha.Algorithm
import io.dsha.encoding.RowSchema

/**
 * The final step (SPEC.md, "Finalisation" and "Output"): SHA-256 over the schema digest, the row count and the
 * 128-bit sum of row digests, wrapped as a multihash and printed in multibase base16.
 */
object Digest {

  /** SHA-256("dsha-v1" || schema digest || rows as u64 LE || sum as u128 LE). */
  def finalDigest(schemaDigest: Array[Byte], rows: Long, sumHigh: Long, sumLow: Long): Array[Byte] = {
    val out = new ByteArrayOutputStream(7 + 32 + 8 + 16)
    out.write(Algorithm.FinalDomain.getBytes(US_ASCII))
    out.write(schemaDigest)
    writeLongLE(out, rows)
    writeLongLE(out, sumLow)
    writeLongLE(out, sumHigh)
    RowSchema.sha256(out.toByteArray)
  }

  /** varint(code) || varint(length) || digest, varints as unsigned LEB128 (the multiformats unsigned-varint). */
  def multihash(digest: Array[Byte]): Array[Byte] = {
    val out = new ByteArrayOutputStream(digest.length + 6)
    writeVarint(out, Algorithm.MultihashCode.toLong)
    writeVarint(out, digest.length.toLong)
    out.write(digest)
    out.toByteArray
  }

  /** Multibase base16 lower case: the prefix "f", then two hex digits per byte. */
  def multibase(multihash: Array[Byte]): String = "f" + RowSchema.hex(multihash)

  def digestString(schemaDigest: Array[Byte], rows: Long, sumHigh: Long, sumLow: Long): UTF8String =
    UTF8String.fromString(multibase(multihash(finalDigest(schemaDigest, rows, sumHigh, sumLow))))

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
  def fingerprint(schema: RowSchema, rows: Long, sumHigh: Long, sumLow: Long): InternalRow = {
    val mh = multihash(finalDigest(schema.digest, rows, sumHigh, sumLow))
    new GenericInternalRow(Array[Any](
      UTF8String.fromString(multibase(mh)),
      rows,
      UTF8String.fromString(schema.digestHex),
      UTF8String.fromString(f"$sumHigh%016x$sumLow%016x"),
      UTF8String.fromString(schema.canonical),
      UTF8String.fromString(Algorithm.Label),
      mh
    ))
  }

  private def writeLongLE(out: ByteArrayOutputStream, v: Long): Unit = {
    var i = 0
    while (i < 8) {
      out.write((v >>> (8 * i)).toInt & 0xff)
      i += 1
    }
  }

  private def writeVarint(out: ByteArrayOutputStream, value: Long): Unit = {
    var v = value
    while (v >= 0x80) {
      out.write(((v & 0x7f) | 0x80).toInt)
      v >>>= 7
    }
    out.write(v.toInt)
  }
}
