package io.dsha

import io.dsha.GoldenFiles.{elements, table, text}

/**
 * SPEC.md §16.5: the dsha-secure-v1, dsha-secure-v2 and dsha-keyed-v1 golden vectors (tests/golden/vectors-secure.json
 * and vectors-secure-v2.json, written by the independent reference), computed over the tables of vectors.json in half
 * the execution modes each (one generated, one interpreted; each mode runs half the vectors), every fourth vector in one
 * on partial builds (SparkSuite.entriesOfThisBuild, sameInModesByIndex): the SHA-256 of the
 * secure state (4 KiB) and what it finalises to, the digest and the SHA-256 of the content sum; the keyed digest,
 * content sum and state, and what that state finalises to without the key.
 */
class GoldenSecureVectorsSuite extends GoldenSuite {

  private val file = GoldenFiles.read("vectors-secure.json")
  private val key = s"'${text(file, "key_hex")}', "
  private val expected = elements(file.get("vectors"))
  // SPEC.md §16.7: the dsha-secure-v2 outputs of the same vectors, by name (tests/golden/vectors-secure-v2.json).
  private val secureV2 = elements(GoldenFiles.read("vectors-secure-v2.json").get("vectors"))
    .map(e => text(e, "name") -> e.get("secure_v2")).toMap

  test("the files cover maps, variants and most vectors of vectors.json; dsha-secure-v2's the same vectors") {
    val names = expected.map(text(_, "name")).toSet
    assert(names.size >= 40 && Set("map_1234", "map_3412").subsetOf(names))
    assert(names.exists(n => text(table(n), "schema").contains("variant")))
    assert(secureV2.keySet == names)
  }

  for ((e, index) <- SparkSuite.entriesOfThisBuild(expected)) {
    val name = text(e, "name")
    test(s"secure (v1, v2) and keyed golden vector: $name") {
      val v = table(name)
      val args = GoldenFiles.arguments(v)
      val (secure, keyed, v2) = (e.get("secure"), e.get("keyed"), secureV2(name))
      onThisSpark(v) {
        // Each secure digest and content sum as its state finalises (which SecureDigestSuite holds equal to what
        // dsha_secure(_v2) and dsha_secure(_v2)_fingerprint give): one aggregate of 513 (257) words, where three
        // would take twice as long in generated code.
        def secureColumns(function: String) = Seq(
          s"dsha_final($function($args))",
          s"sha2($function($args), 256)",
          s"sha2(dsha_final_fingerprint($function($args)).content_sum, 256)"
        )
        val outputs = aggregatedInModesByIndex(
          index,
          v,
          secureColumns("dsha_secure_state") ++ secureColumns("dsha_secure_v2_state") ++ keyedColumns(key, args)
        )
        for ((expected, found) <- Seq(secure -> outputs.take(3), v2 -> outputs.slice(3, 6))) {
          val Seq(s, ss, sc) = found
          assert(s == text(expected, "dsha"), "secure digest")
          assert(ss == text(expected, "state_sha256"), "SHA-256 of the secure state")
          assert(sc == text(expected, "content_sum_sha256"), "SHA-256 of the secure content sum")
        }
        assertKeyed(outputs.drop(6), keyed)
      }
    }
  }
}
