package io.dsha

import io.dsha.GoldenFiles.{elements, table, text}

/**
 * SPEC.md §16.5: the dsha-secure-v1 and dsha-keyed-v1 golden vectors (tests/golden/vectors-secure.json, written by the
 * independent reference), computed over the tables of vectors.json in half the execution modes each (one generated,
 * one interpreted; each mode runs half the vectors), one on partial builds (SparkSuite.sameInModesByIndex): the SHA-256 of the
 * secure state (4 KiB) and what it finalises to, the digest and the SHA-256 of the content sum; the keyed digest,
 * content sum and state, and what that state finalises to without the key.
 */
class GoldenSecureVectorsSuite extends GoldenSuite {

  private val file = GoldenFiles.read("vectors-secure.json")
  private val key = s"'${text(file, "key_hex")}', "
  private val expected = elements(file.get("vectors"))

  test("the file covers maps, variants and most vectors of vectors.json") {
    val names = expected.map(text(_, "name")).toSet
    assert(names.size >= 40 && Set("map_1234", "map_3412").subsetOf(names))
    assert(names.exists(n => text(table(n), "schema").contains("variant")))
  }

  for ((e, index) <- expected.zipWithIndex) {
    val name = text(e, "name")
    test(s"secure and keyed golden vector: $name") {
      val v = table(name)
      val args = GoldenFiles.arguments(v)
      val (secure, keyed) = (e.get("secure"), e.get("keyed"))
      onThisSpark(v) {
        // The secure digest and content sum as its state finalises (which SecureDigestSuite holds equal to what
        // dsha_secure and dsha_secure_fingerprint give): one aggregate of 513 words, where three would take twice as
        // long in generated code.
        val outputs = aggregatedInModesByIndex(
          index,
          v,
          Seq(
            s"dsha_final(dsha_secure_state($args))",
            s"sha2(dsha_secure_state($args), 256)",
            s"sha2(dsha_final_fingerprint(dsha_secure_state($args)).content_sum, 256)"
          ) ++ keyedColumns(key, args)
        )
        val Seq(s, ss, sc) = outputs.take(3)
        assert(s == text(secure, "dsha"), "secure digest")
        assert(ss == text(secure, "state_sha256"), "SHA-256 of the secure state")
        assert(sc == text(secure, "content_sum_sha256"), "SHA-256 of the secure content sum")
        assertKeyed(outputs.drop(3), keyed)
      }
    }
  }
}
