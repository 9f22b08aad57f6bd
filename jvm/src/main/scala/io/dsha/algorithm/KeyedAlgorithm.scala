package io.dsha.algorithm

import java.nio.charset.StandardCharsets.US_ASCII

import io.dsha.algorithm.secure.{BufferedRowHasher, SortedEntrySet}
import io.dsha.util.Secret

/**
 * A keyed tamper-evident digest (SPEC.md §16.2, §16.6): a pseudo-random function of each row's secure encoding under
 * the key, summed mod 2^256. Its algorithms differ only in that function ([[rowHasherFor]]). The key is needed only
 * to hash rows; states merge and finalise without it (compare algorithms of states by `id`). Instances are equal when
 * their ids and keys are, so that Spark never takes two aggregates under different keys for one; an instance prints as
 * its id, never its key.
 */
abstract class KeyedAlgorithm(val id: String, val multihashCode: Int, val key: Option[Secret]) extends Algorithm {
  private val domain = id.getBytes(US_ASCII)

  def description: String = s"dsha algorithm $id"

  /** The same algorithm under `key`. */
  def withKey(key: Secret): KeyedAlgorithm

  /** The row hasher of this algorithm under the key's bytes. */
  protected def rowHasherFor(schemaDigest: Array[Byte], key: Array[Byte]): BufferedRowHasher

  def newRowHasher(schemaDigest: Array[Byte]): RowHasher = key match {
    case Some(k) => rowHasherFor(schemaDigest, k.bytes)
    case None => throw new IllegalStateException(s"$id hashes rows only with a key (this one came from a state)")
  }

  /**
   * What names the key without revealing it (SPEC.md §12.1 `key_id`): the first 16 bytes of HMAC-SHA-256 under the
   * key of "<id> key id", in hex. Per-file states are reused only under the key that made them.
   */
  def keyId: Option[String] = key.map(k => io.dsha.util.Bytes.hex(KeyedAlgorithm.hmac(k.bytes, s"$id key id").take(16)))

  /**
   * The MAC of a manifest (SPEC.md §12.2): HMAC-SHA-256 of its checksummed bytes under a key derived from this one,
   * HMAC-SHA-256(key, "<id> manifest mac key"), so that only a key holder can write a manifest whose states are used.
   */
  def manifestMac(fields: Array[Byte]): Option[Array[Byte]] = key.map { k =>
    KeyedAlgorithm.hmac(KeyedAlgorithm.hmac(k.bytes, s"$id manifest mac key"), fields)
  }

  def entrySetClass: Class[SortedEntrySet] = classOf[SortedEntrySet]
  def newEntrySet(): SortedEntrySet = new SortedEntrySet
  def combiner: Combiner = Sum256

  def finalDigest(schemaDigest: Array[Byte], rows: Long, state: Array[Long]): Array[Byte] =
    Algorithm.sha256Final(domain, schemaDigest, rows, state)

  override def equals(other: Any): Boolean = other match {
    case k: KeyedAlgorithm => k.id == id && k.key == key
    case _ => false
  }
  override def hashCode: Int = id.hashCode
}

object KeyedAlgorithm {

  private def hmac(key: Array[Byte], text: String): Array[Byte] = hmac(key, text.getBytes(US_ASCII))

  private def hmac(key: Array[Byte], message: Array[Byte]): Array[Byte] = {
    val mac = javax.crypto.Mac.getInstance("HmacSHA256")
    mac.init(new javax.crypto.spec.SecretKeySpec(key, "HmacSHA256"))
    mac.doFinal(message)
  }

  /** Which keyed algorithm the SQL functions use (dsha-keyed-v1 unless set): read when a query is analysed. */
  val Setting = "spark.dsha.keyed.algorithm"

  val unkeyed: Seq[KeyedAlgorithm] = Seq(DshaKeyedV1.Unkeyed, DshaKeyedV2.Unkeyed)

  def byId(id: String, what: String): KeyedAlgorithm =
    unkeyed.find(_.id == id.trim).getOrElse(
      throw new IllegalArgumentException(
        s"$what is '$id', which is no keyed algorithm (known: ${unkeyed.map(_.id).mkString(", ")})"
      )
    )
}
