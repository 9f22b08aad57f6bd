package io.dsha.algorithm

import java.nio.charset.StandardCharsets.US_ASCII

import io.dsha.algorithm.secure.{HmacRowHasher, SortedEntrySet}
import io.dsha.util.Secret

/**
 * dsha-keyed-v1 (SPEC.md §16.2), tamper-evident for whoever lacks the key: MSet-Add-Hash, the sum mod 2^256 of
 * HMAC-SHA-256 of each row's secure encoding. The key is needed only to hash rows; states merge and finalise without
 * it (compare algorithms of states by `id`). Instances are equal when their keys are, so that Spark never takes two
 * aggregates under different keys for one; an instance prints as its id, never its key.
 */
final class DshaKeyedV1 private (private[dsha] val key: Option[Secret]) extends Algorithm {
  val id: String = DshaKeyedV1.Id
  val description = "dsha algorithm dsha-keyed-v1"
  val multihashCode: Int = 0x3d5a10

  def rowHasherClass: Class[HmacRowHasher] = classOf[HmacRowHasher]

  def newRowHasher(schemaDigest: Array[Byte]): HmacRowHasher = key match {
    case Some(k) => new HmacRowHasher(schemaDigest, k.bytes)
    case None => throw new IllegalStateException(s"$id hashes rows only with a key (this one came from a state)")
  }

  /**
   * What names the key without revealing it (SPEC.md §12.1 `key_id`): the first 16 bytes of HMAC-SHA-256 under the
   * key of "dsha-keyed-v1 key id", in hex. Per-file states are reused only under the key that made them.
   */
  def keyId: Option[String] = key.map { k =>
    val mac = javax.crypto.Mac.getInstance("HmacSHA256")
    mac.init(new javax.crypto.spec.SecretKeySpec(k.bytes, "HmacSHA256"))
    io.dsha.util.Bytes.hex(mac.doFinal(s"$id key id".getBytes(US_ASCII)).take(16))
  }

  def entrySetClass: Class[SortedEntrySet] = classOf[SortedEntrySet]
  def newEntrySet(): SortedEntrySet = new SortedEntrySet
  def combiner: Combiner = Sum256

  def finalDigest(schemaDigest: Array[Byte], rows: Long, state: Array[Long]): Array[Byte] =
    Algorithm.sha256Final(DshaKeyedV1.Domain, schemaDigest, rows, state)

  override def equals(other: Any): Boolean = other match {
    case k: DshaKeyedV1 => k.key == key
    case _ => false
  }
  override def hashCode: Int = id.hashCode
}

object DshaKeyedV1 {
  val Id = "dsha-keyed-v1"
  private val Domain = Id.getBytes(US_ASCII)

  def apply(key: Secret): DshaKeyedV1 = new DshaKeyedV1(Some(key))

  /** The algorithm of a keyed state: merges and finalises, cannot hash rows. */
  val Unkeyed: DshaKeyedV1 = new DshaKeyedV1(None)
}
