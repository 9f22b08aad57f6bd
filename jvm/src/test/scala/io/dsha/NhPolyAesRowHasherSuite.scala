package io.dsha

import java.math.BigInteger
import javax.crypto.{Cipher, Mac}
import javax.crypto.spec.{IvParameterSpec, SecretKeySpec}

import scala.util.Random

import org.scalatest.funsuite.AnyFunSuite

import io.dsha.algorithm.secure.NhPolyAesRowHasher

/**
 * dsha-keyed-v2's row value (SPEC.md §16.6) against the formulas written out with big integers and the JDK's
 * AES-CTR (the hasher uses ECB over counter blocks, word arithmetic and a folded polynomial).
 */
class NhPolyAesRowHasherSuite extends AnyFunSuite {
  private val P = BigInteger.ONE.shiftLeft(127).subtract(BigInteger.ONE)
  private val Two64 = BigInteger.ONE.shiftLeft(64)
  private val Two128 = BigInteger.ONE.shiftLeft(128)

  private def le(b: Array[Byte], from: Int, n: Int): BigInteger =
    new BigInteger(1, b.slice(from, from + n).reverse)

  private def leBytes(v: BigInteger, n: Int): Array[Byte] = {
    val be = v.toByteArray.reverse.padTo(n + 1, 0.toByte).take(n)
    be
  }

  /** The row value as §16.6 writes it. */
  private def expected(key: Array[Byte], schemaDigest: Array[Byte], m: Array[Byte]): Array[Byte] = {
    val mac = Mac.getInstance("HmacSHA256")
    mac.init(new SecretKeySpec(key, "HmacSHA256"))
    val seed = mac.doFinal("dsha-keyed-v2".getBytes("US-ASCII") ++ schemaDigest)
    val n = (m.length + 15) / 16
    val ctr = Cipher.getInstance("AES/CTR/NoPadding")
    ctr.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(seed, "AES"), new IvParameterSpec(new Array[Byte](16)))
    val stream = ctr.doFinal(new Array[Byte](48 + 8 * (2 * n + 2)))
    val r = le(stream, 0, 16).mod(BigInteger.ONE.shiftLeft(127)).mod(P)
    val e = stream.slice(16, 48)
    def k(i: Int): BigInteger = le(stream, 48 + 8 * i, 8)
    val padded = m.padTo(16 * n, 0.toByte)
    def w(t: Int): BigInteger = le(padded, 8 * t, 8)
    val nh = (0 to 1).map { j =>
      (0 until n).foldLeft(BigInteger.ZERO) { (s, i) =>
        val a = w(2 * i).add(k(2 * i + 2 * j)).mod(Two64)
        val b = w(2 * i + 1).add(k(2 * i + 1 + 2 * j)).mod(Two64)
        s.add(a.multiply(b)).mod(Two128)
      }
    }
    val a =
      Seq(nh(0).mod(Two64), nh(0).shiftRight(64), nh(1).mod(Two64), nh(1).shiftRight(64), BigInteger.valueOf(m.length))
    val u = a.zipWithIndex.foldLeft(BigInteger.ZERO) { case (s, (ai, i)) =>
      s.add(ai.multiply(r.modPow(BigInteger.valueOf(5 - i), P)))
    }.mod(P)
    val aes = Cipher.getInstance("AES/ECB/NoPadding")
    aes.init(Cipher.ENCRYPT_MODE, new SecretKeySpec(e, "AES"))
    aes.doFinal(leBytes(u, 16) ++ leBytes(u.add(BigInteger.ONE.shiftLeft(127)), 16))
  }

  private def computed(h: NhPolyAesRowHasher, m: Array[Byte]): Array[Byte] = {
    h.startRow()
    h.putBytes(m)
    h.finishRow()
    h.digestInto(new Array[Byte](32))
  }

  test("row values equal §16.6's formulas: lengths 0..300, then long rows that grow the NH key, random keys") {
    val random = new Random(7)
    for (trial <- 0 until 8) {
      val key = Array.fill(16 + random.nextInt(60))(random.nextInt(256).toByte)
      val schemaDigest = Array.fill(32)(random.nextInt(256).toByte)
      val hasher = new NhPolyAesRowHasher(schemaDigest, key)
      val lengths = (0 to 300) ++ Seq(495, 496, 497, 1024, 3001, 20000)
      for (len <- lengths) {
        val m = Array.fill(len)(random.nextInt(256).toByte)
        assert(computed(hasher, m).toSeq == expected(key, schemaDigest, m).toSeq, s"key #$trial, length $len")
      }
      // words of all ones: the largest products, carries in every sum
      val ones = Array.fill(160)(-1.toByte)
      assert(computed(hasher, ones).toSeq == expected(key, schemaDigest, ones).toSeq, s"key #$trial, all ones")
    }
  }

  test("trailing zero bytes change the value (the length is a coefficient); the schema digest keys the value") {
    val key = Array.tabulate(32)(_.toByte)
    val sd = Array.fill(32)(1.toByte)
    val h = new NhPolyAesRowHasher(sd, key)
    val m = Array[Byte](1, 2, 3)
    assert(computed(h, m).toSeq != computed(h, m :+ 0.toByte).toSeq)
    assert(computed(h, Array.emptyByteArray).toSeq != computed(h, Array[Byte](0)).toSeq)
    assert(computed(new NhPolyAesRowHasher(Array.fill(32)(2.toByte), key), m).toSeq != computed(h, m).toSeq)
  }
}
