package io.dsha.algorithm

import java.nio.charset.StandardCharsets.US_ASCII

import io.dsha.algorithm.secure.{LtHashRowHasher, SortedEntrySet}

/**
 * dsha-secure-v1 (SPEC.md §16.3), tamper-evident without a secret: LtHash with 512 lanes of 64 bits, each row's lanes
 * the AES-256-CTR keystream under the SHA-256 of its secure encoding; sets inside a value sorted ([[SortedEntrySet]]).
 */
case object DshaSecureV1 extends Algorithm {
  val id = "dsha-secure-v1"
  val description = "dsha algorithm dsha-secure-v1"
  val multihashCode: Int = 0x3d5a20

  def rowHasherClass: Class[LtHashRowHasher] = classOf[LtHashRowHasher]
  def newRowHasher(schemaDigest: Array[Byte]): LtHashRowHasher = new LtHashRowHasher(schemaDigest)
  def entrySetClass: Class[SortedEntrySet] = classOf[SortedEntrySet]
  def newEntrySet(): SortedEntrySet = new SortedEntrySet
  val combiner: Combiner = LaneSum(LtHashRowHasher.LANES)
  override def statesTrusted: Boolean = false

  private val Domain = id.getBytes(US_ASCII)

  def finalDigest(schemaDigest: Array[Byte], rows: Long, state: Array[Long]): Array[Byte] =
    Algorithm.sha256Final(Domain, schemaDigest, rows, state)
}
