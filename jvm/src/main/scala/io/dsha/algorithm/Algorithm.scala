package io.dsha.algorithm

/**
 * A digest algorithm as a composition of pieces (SPEC.md): a row hash the encoders write into, an entry set for the
 * order-independent parts of a value (maps, variant objects), a combiner of row digests, and a finalisation with the
 * row count and the schema digest. dsha-v1 is one such composition ([[DshaV1]]); a new algorithm is a new object
 * beside it, with its own id — the writers, the aggregate and the execution code take the algorithm as a value.
 *
 * Generated code names `rowHasherClass` and `entrySetClass`, so its calls stay monomorphic.
 */
trait Algorithm extends Serializable {

  /** The id users see (`dsha-v1`); also the algorithm's label in fingerprints. */
  def id: String

  /** The name in error messages ("dsha algorithm v1"). */
  def description: String

  /** Multihash code of the final digest (multicodec private-use range 0x300000-0x3FFFFF). */
  def multihashCode: Int

  def rowHasherClass: Class[_ <: RowHasher]

  /** A row hasher whose rows start after `schemaDigest`. */
  def newRowHasher(schemaDigest: Array[Byte]): RowHasher

  def entrySetClass: Class[_ <: EntrySet]

  def newEntrySet(): EntrySet

  def combiner: Combiner

  /** The final digest of a table: its schema digest, its row count and the combined state of its row digests. */
  def finalDigest(schemaDigest: Array[Byte], rows: Long, state: Array[Long]): Array[Byte]

  /**
   * Whether a stored state of this algorithm may stand for its rows (SPEC.md §12.3): not a public tamper-evident
   * algorithm's, which anyone can compute for any data, so a stored one proves nothing about the files.
   */
  def statesTrusted: Boolean = true

  override def toString: String = id
}

object Algorithm {

  /** Every algorithm a state may carry. The keyed one without its key: states merge and finalise without it. */
  val all: Seq[Algorithm] = Seq(DshaV1, DshaKeyedV1.Unkeyed, DshaKeyedV2.Unkeyed, DshaSecureV1, DshaSecureV2)

  /** SHA-256(domain || schema digest || rows as u64 LE || state words as u64 LE): every algorithm's final digest. */
  def sha256Final(domain: Array[Byte], schemaDigest: Array[Byte], rows: Long, state: Array[Long]): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream(domain.length + 32 + 8 + 8 * state.length)
    out.write(domain)
    out.write(schemaDigest)
    io.dsha.util.Bytes.writeLongLE(out, rows)
    state.foreach(io.dsha.util.Bytes.writeLongLE(out, _))
    io.dsha.util.Bytes.sha256(out.toByteArray)
  }

  def byId(id: String): Algorithm = all.find(_.id == id).getOrElse(
    throw new IllegalArgumentException(s"unknown dsha algorithm '$id' (known: ${all.map(_.id).mkString(", ")})")
  )
}
