package io.dsha.util

import java.io.ByteArrayOutputStream
import java.security.MessageDigest

/** Byte helpers of the output formats: SHA-256, hex, little-endian words, unsigned varints. */
object Bytes {
  def sha256(bytes: Array[Byte]): Array[Byte] = MessageDigest.getInstance("SHA-256").digest(bytes)

  /** Lower-case hex, two digits per byte, in byte order. */
  def hex(bytes: Array[Byte]): String = bytes.map(b => f"${b & 0xff}%02x").mkString

  def writeLongLE(out: ByteArrayOutputStream, v: Long): Unit = writeLE(out, v, 8)

  def writeIntLE(out: ByteArrayOutputStream, v: Int): Unit = writeLE(out, v.toLong, 4)

  private def writeLE(out: ByteArrayOutputStream, v: Long, bytes: Int): Unit = {
    var i = 0
    while (i < bytes) {
      out.write((v >>> (8 * i)).toInt & 0xff)
      i += 1
    }
  }

  /** The multiformats unsigned varint: LEB128, 7 bits per byte, least significant group first. */
  def writeVarint(out: ByteArrayOutputStream, value: Long): Unit = {
    var v = value
    while (v >= 0x80) {
      out.write(((v & 0x7f) | 0x80).toInt)
      v >>>= 7
    }
    out.write(v.toInt)
  }
}
