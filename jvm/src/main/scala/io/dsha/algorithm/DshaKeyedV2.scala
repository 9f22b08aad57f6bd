package io.dsha.algorithm

import io.dsha.algorithm.secure.NhPolyAesRowHasher
import io.dsha.util.Secret

/**
 * dsha-keyed-v2 (SPEC.md §16.6): the promise of dsha-keyed-v1 with a cheaper pseudo-random function of each
 * row, NH and a polynomial modulo 2^127 - 1 under subkeys of the key, then AES-256 (under half of HMAC's time).
 */
final class DshaKeyedV2 private (key: Option[Secret]) extends KeyedAlgorithm(DshaKeyedV2.Id, 0x3d5a11, key) {
  def rowHasherClass: Class[NhPolyAesRowHasher] = classOf[NhPolyAesRowHasher]
  def withKey(key: Secret): DshaKeyedV2 = DshaKeyedV2(key)
  protected def rowHasherFor(schemaDigest: Array[Byte], key: Array[Byte]): NhPolyAesRowHasher =
    new NhPolyAesRowHasher(schemaDigest, key)
}

object DshaKeyedV2 {
  val Id = "dsha-keyed-v2"

  def apply(key: Secret): DshaKeyedV2 = new DshaKeyedV2(Some(key))

  /** The algorithm of a keyed state: merges and finalises, cannot hash rows. */
  val Unkeyed: DshaKeyedV2 = new DshaKeyedV2(None)
}
