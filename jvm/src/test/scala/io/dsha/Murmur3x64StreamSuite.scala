package io.dsha

import scala.util.Random

import org.apache.commons.codec.digest.MurmurHash3
import org.apache.spark.unsafe.Platform
import org.scalatest.funsuite.AnyFunSuite

import io.dsha.hash.Murmur3x64Stream

/** The streaming hasher must equal a one-shot MurmurHash3_x64_128 (Commons Codec's) however the bytes arrive. */
class Murmur3x64StreamSuite extends AnyFunSuite {

  private def reference(bytes: Array[Byte]): (Long, Long) = {
    val r = MurmurHash3.hash128x64(bytes, 0, bytes.length, 0)
    (r(0), r(1))
  }

  /** Feeds `bytes` in random pieces through every put method. */
  private def streamed(bytes: Array[Byte], random: Random): (Long, Long) = {
    val h = new Murmur3x64Stream
    h.reset()
    val buf = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
    var i = 0
    while (i < bytes.length) {
      val left = bytes.length - i
      random.nextInt(9) match {
        case 0 if left >= 8 => h.putLong(buf.getLong(i)); i += 8
        case 5 if left >= 9 => h.putByteAndLong(bytes(i), buf.getLong(i + 1)); i += 9
        case 6 if left >= 5 => h.putByteAndInt(bytes(i), buf.getInt(i + 1)); i += 5
        case 7 if left >= 3 => h.putByteAndShort(bytes(i), buf.getShort(i + 1)); i += 3
        case 8 if left >= 2 => h.putByteAndByte(bytes(i), bytes(i + 1)); i += 2
        case 1 if left >= 4 => h.putInt(buf.getInt(i)); i += 4
        case 2 if left >= 2 => h.putShort(buf.getShort(i)); i += 2
        case 3 =>
          val n = random.nextInt(left + 1)
          h.putBytes(bytes, Platform.BYTE_ARRAY_OFFSET + i, n); i += n
        case _ => h.putByte(bytes(i)); i += 1
      }
    }
    h.finish()
    (h.digestLow(), h.digestHigh())
  }

  test("equals one-shot MurmurHash3_x64_128 for every length 0..200, lengths around the buffer size, and any split") {
    val random = new Random(42)
    val aroundBuffer = Seq(496, 511, 512, 513, 527, 528, 529, 543, 1000, 1024, 1040, 4099, 70001)
    for (len <- (0 to 200) ++ aroundBuffer; _ <- 0 until 5) {
      val bytes = new Array[Byte](len)
      random.nextBytes(bytes)
      assert(streamed(bytes, random) == reference(bytes), s"length $len")
    }
  }

  test("resuming from a block-aligned prefix state equals hashing prefix and rest together") {
    val random = new Random(7)
    for (prefixLength <- Seq(32, 1040)) {
      val prefix = new Array[Byte](prefixLength)
      random.nextBytes(prefix)
      val h = new Murmur3x64Stream
      h.reset()
      h.putBytes(prefix)
      val (s1, s2, n) = (h.stateH1(), h.stateH2(), h.length())
      assert(n == prefixLength)
      for (len <- Seq(0, 1, 15, 16, 17, 100, 600)) {
        val rest = new Array[Byte](len)
        random.nextBytes(rest)
        h.reset(s1, s2, n)
        h.putBytes(rest)
        h.finish()
        assert((h.digestLow(), h.digestHigh()) == reference(prefix ++ rest), s"prefix $prefixLength, rest $len")
      }
    }
    val error = intercept[IllegalArgumentException](new Murmur3x64Stream().reset(1L, 2L, 17L))
    assert(error.getMessage.contains("16-byte blocks"))
  }

  test("digest bytes are h1 then h2, little-endian") {
    val h = new Murmur3x64Stream
    h.reset()
    h.putBytes("dsha".getBytes("UTF-8"))
    h.finish()
    val bytes = h.digestBytes()
    val lo = java.nio.ByteBuffer.wrap(bytes, 0, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong
    val hi = java.nio.ByteBuffer.wrap(bytes, 8, 8).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong
    assert((lo, hi) == reference("dsha".getBytes("UTF-8")))
  }

  test("byte ranges read from off-heap memory (base null, as off-heap UTF8Strings are) hash like the same bytes") {
    val random = new Random(11)
    for (len <- (0 to 80) ++ Seq(511, 512, 600)) {
      val bytes = new Array[Byte](len)
      random.nextBytes(bytes)
      val address = Platform.allocateMemory(math.max(len, 1).toLong)
      try {
        Platform.copyMemory(bytes, Platform.BYTE_ARRAY_OFFSET, null, address, len.toLong)
        for (before <- Seq(0, 3, 15)) {
          val head = new Array[Byte](before)
          random.nextBytes(head)
          val h = new Murmur3x64Stream
          h.reset()
          h.putBytes(head)
          h.putBytes(null, address, len)
          h.finish()
          assert((h.digestLow(), h.digestHigh()) == reference(head ++ bytes), s"length $len after $before bytes")
        }
      } finally {
        Platform.freeMemory(address)
      }
    }
  }
}
