package io.dsha.algorithm

import io.dsha.algorithm.secure.HmacRowHasher
import io.dsha.util.Secret

/**
 * dsha-keyed-v1 (SPEC.md §16.2), tamper-evident for whoever lacks the key: MSet-Add-Hash, the sum mod 2^256 of
 * HMAC-SHA-256 of each row's secure encoding.
 */
final class DshaKeyedV1 private (key: Option[Secret]) extends KeyedAlgorithm(DshaKeyedV1.Id, 0x3d5a10, key) {
  def rowHasherClass: Class[HmacRowHasher] = classOf[HmacRowHasher]
  def withKey(key: Secret): DshaKeyedV1 = DshaKeyedV1(key)
  protected def rowHasherFor(schemaDigest: Array[Byte], key: Array[Byte]): HmacRowHasher =
    new HmacRowHasher(schemaDigest, key)
}

object DshaKeyedV1 {
  val Id = "dsha-keyed-v1"

  def apply(key: Secret): DshaKeyedV1 = new DshaKeyedV1(Some(key))

  /** The algorithm of a keyed state: merges and finalises, cannot hash rows. */
  val Unkeyed: DshaKeyedV1 = new DshaKeyedV1(None)
}
