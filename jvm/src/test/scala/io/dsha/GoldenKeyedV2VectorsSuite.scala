package io.dsha

import io.dsha.GoldenFiles.{elements, table, text}
import io.dsha.algorithm.{DshaKeyedV2, KeyedAlgorithm}
import io.dsha.util.Secret

/**
 * SPEC.md §16.6: the dsha-keyed-v2 golden vectors (tests/golden/vectors-keyed-v2.json, written by the independent
 * reference from the SPEC text), computed over the tables of vectors.json by the keyed functions under
 * `spark.dsha.keyed.algorithm=dsha-keyed-v2` in half the execution modes each, every fourth vector in one on partial
 * builds (SparkSuite.entriesOfThisBuild, sameInModesByIndex):
 * digest, content sum, algorithm and state, and what the state finalises to without the key; and the key's `key_id`.
 */
class GoldenKeyedV2VectorsSuite extends GoldenSuite {

  private val file = GoldenFiles.read("vectors-keyed-v2.json")
  private val keyHex = text(file, "key_hex")
  private val key = s"'$keyHex', "
  private val expected = elements(file.get("vectors"))

  test("the file covers the tables of vectors.json; key_id names its key") {
    assert(expected.map(text(_, "name")).toSet == GoldenFiles.vectors.map(text(_, "name")).toSet)
    assert(DshaKeyedV2(Secret.parse(keyHex, "the vectors' key")).keyId.contains(text(file, "key_id")))
  }

  for ((e, index) <- SparkSuite.entriesOfThisBuild(expected)) {
    val name = text(e, "name")
    test(s"keyed-v2 golden vector: $name") {
      val v = table(name)
      val args = GoldenFiles.arguments(v)
      val keyed = e.get("keyed_v2")
      onThisSpark(v) {
        val outputs = withConf(Map(KeyedAlgorithm.Setting -> DshaKeyedV2.Id)) {
          aggregatedInModesByIndex(index, v, keyedColumns(key, args) :+ s"dsha_keyed_fingerprint($key$args).algorithm")
        }
        assert(outputs.last == DshaKeyedV2.Id, "algorithm")
        // The state names its algorithm: it finalises without the key or the setting.
        assertKeyed(outputs.init, keyed)
      }
    }
  }
}
