package io.dsha.algorithm

import java.nio.charset.StandardCharsets.US_ASCII

import io.dsha.algorithm.v1.{Murmur3EntrySum, Murmur3RowHasher}

/**
 * dsha algorithm v1 (SPEC.md): MurmurHash3_x64_128 row digests after the schema digest, map entries summed mod 2^128,
 * row digests summed mod 2^128 ([[Sum128]]), finalised as SHA-256("dsha-v1" || schema digest || rows || sum).
 */
case object DshaV1 extends Algorithm {
  val id = "dsha-v1"
  val description = "dsha algorithm v1"
  val multihashCode: Int = 0x3d5a01

  def rowHasherClass: Class[Murmur3RowHasher] = classOf[Murmur3RowHasher]
  def newRowHasher(schemaDigest: Array[Byte]): Murmur3RowHasher = new Murmur3RowHasher(schemaDigest)
  def entrySetClass: Class[Murmur3EntrySum] = classOf[Murmur3EntrySum]
  def newEntrySet(): Murmur3EntrySum = new Murmur3EntrySum
  def combiner: Combiner = Sum128

  private val Domain = id.getBytes(US_ASCII)

  /** SHA-256("dsha-v1" || schema digest || rows as u64 LE || sum as u128 LE, i.e. its words low then high). */
  def finalDigest(schemaDigest: Array[Byte], rows: Long, state: Array[Long]): Array[Byte] =
    Algorithm.sha256Final(Domain, schemaDigest, rows, state)
}
