package io.dsha

/** Identity of the digest algorithm. Any change to a digest of any input needs a new id (SPEC.md, "Versioning"). */
object Algorithm {
  val Name = "dsha algorithm v1"
  val Label = "dsha-v1"

  /** Multihash code of a dsha-v1 digest, in the multicodec private-use range 0x300000-0x3FFFFF. */
  val MultihashCode: Int = 0x3d5a01

  /** Domain-separation prefix of the final SHA-256 input. */
  val FinalDomain: String = "dsha-v1"

  /** Length in bytes of SHA-256 output, used for the schema digest and the final digest. */
  val Sha256Length = 32
}
