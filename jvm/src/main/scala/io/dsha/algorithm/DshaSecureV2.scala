package io.dsha.algorithm

import java.nio.charset.StandardCharsets.US_ASCII

import io.dsha.algorithm.secure.{FixedKeyLtHashRowHasher, SortedEntrySet}

/**
 * dsha-secure-v2 (SPEC.md §16.7), tamper-evident without a secret at a fraction of dsha-secure-v1's cost: LtHash with
 * 256 lanes of 64 bits, each row's lanes two fixed-key AES-128 expansions of the halves of its SHA-256 seed, combined
 * by exclusive or (no key set up per row); sets inside a value sorted ([[SortedEntrySet]]).
 */
case object DshaSecureV2 extends Algorithm {
  val id = "dsha-secure-v2"
  val description = "dsha algorithm dsha-secure-v2"
  val multihashCode: Int = 0x3d5a21

  def rowHasherClass: Class[FixedKeyLtHashRowHasher] = classOf[FixedKeyLtHashRowHasher]
  def newRowHasher(schemaDigest: Array[Byte]): FixedKeyLtHashRowHasher = new FixedKeyLtHashRowHasher(schemaDigest)
  def entrySetClass: Class[SortedEntrySet] = classOf[SortedEntrySet]
  def newEntrySet(): SortedEntrySet = new SortedEntrySet
  val combiner: Combiner = LaneSum(FixedKeyLtHashRowHasher.LANES)
  override def statesTrusted: Boolean = false

  private val Domain = id.getBytes(US_ASCII)

  def finalDigest(schemaDigest: Array[Byte], rows: Long, state: Array[Long]): Array[Byte] =
    Algorithm.sha256Final(Domain, schemaDigest, rows, state)
}
