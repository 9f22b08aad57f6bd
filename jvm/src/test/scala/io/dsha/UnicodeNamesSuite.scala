package io.dsha

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files

import org.apache.spark.sql.{AnalysisException, DataFrame}
import org.apache.spark.sql.functions.lit

import io.dsha.files.{DshaWriter, PathDigest}

/**
 * Names that are not valid Unicode (SPEC.md §2.1): a lone UTF-16 surrogate, which Spark's JSON reader makes from
 * `"\\ud800"`, has no UTF-8 encoding; every algorithm refuses the name, naming the column with the surrogate escaped,
 * where Java's encoder used to hash it as `?`. Valid names, surrogate pairs included, hash as before.
 */
class UnicodeNamesSuite extends SparkSuite {

  private val Backslash = "\\"
  private val KeyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
  private val Utf8 = Map("encoding" -> "UTF-8")
  private val Calls = Seq(
    "dsha(*)",
    "dsha_fingerprint(*)",
    "dsha_state(*)",
    "logical_hash(*)",
    "dsha_secure(*)",
    s"dsha_keyed('$KeyHex', *)",
    "dsha_sketch(*)"
  )

  /**
   * A JSON file of these lines, read by Spark; `\\u` escapes in the lines are JSON's. With an explicit encoding Spark's
   * reader decodes the text first and keeps a lone surrogate in a name (without one it reads a `_corrupt_record`).
   */
  private def jsonFile(lines: String*): File = {
    val file = new File(tempDir(), "t.json")
    Files.write(file.toPath, lines.mkString("\n").getBytes(UTF_8))
    file
  }

  private def json(lines: String*): DataFrame = spark.read.options(Utf8).json(jsonFile(lines: _*).getPath)

  private def refusal(df: DataFrame, call: String): String =
    intercept[AnalysisException](df.selectExpr(call).collect()).getMessage

  private def assertRefused(message: String, path: String): Unit =
    assert(message.contains(path) && message.contains("lone UTF-16 surrogate"), message)

  test("a column named with a lone surrogate is refused by every function, naming it with the surrogate escaped") {
    val df = json(s"""{"a${Backslash}ud800": 1}""")
    assert(df.columns.toSeq == Seq("a" + 0xd800.toChar), "Spark's JSON reader keeps the lone surrogate")
    Calls.foreach(call => assertRefused(refusal(df, call), s"`a${Backslash}uD800`"))
    // Named explicitly, or under an alias that holds one: the same refusal.
    assertRefused(refusal(df.select(df.columns.head), "dsha(*)"), s"`a${Backslash}uD800`")
    assertRefused(refusal(spark.range(1).select(lit(1).as("b" + 0xdfff.toChar)), "dsha(*)"), s"`b${Backslash}uDFFF`")
  }

  test("a struct field named with a lone surrogate is refused with its path; a low surrogate alone too") {
    val df = json(s"""{"s": {"x${Backslash}udfff": 1, "y": 2}}""")
    assertRefused(refusal(df, "dsha(*)"), s"`s`.`x${Backslash}uDFFF`")
    assertRefused(refusal(df, "dsha(s)"), s"`s`.`x${Backslash}uDFFF`")
    val inArray = json(s"""{"arr": [{"${Backslash}udbff": 1}]}""")
    assertRefused(refusal(inArray, "dsha(*)"), s"`arr`[].`${Backslash}uDBFF`")
  }

  test("names that differ only in a lone surrogate were one name ('?'); now refused, while '?' itself still hashes") {
    val high = json(s"""{"a${Backslash}ud800": 1}""")
    val other = json(s"""{"a${Backslash}udbff": 1}""")
    val question = json("""{"a?": 1}""")
    assertRefused(refusal(high, "dsha(*)"), s"`a${Backslash}uD800`")
    assertRefused(refusal(other, "dsha(*)"), s"`a${Backslash}uDBFF`")
    // The name `a?` is valid: its digest is that of the same column built without JSON.
    assert(digestOf(question) == digestOf(spark.range(1).select(lit(1L).as("a?"))))
  }

  test("a surrogate pair is a valid name: hashed as its code point's UTF-8, equal to the same name built directly") {
    val df = json(s"""{"${Backslash}ud83d${Backslash}ude00": 1, "z": "v"}""")
    val emoji = new String(Character.toChars(0x1f600))
    assert(df.columns.toSet == Set(emoji, "z"))
    val direct = spark.range(1).select(lit("v").as("z"), lit(1L).as(emoji))
    assert(sameInAllModes(digestOf(df)) == digestOf(direct))
    assert(digestOf(df) != digestOf(spark.range(1).select(lit("v").as("z"), lit(1L).as("?"))))
  }

  test("writing or re-digesting files whose column holds a lone surrogate is refused, naming the column") {
    val df = json(s"""{"a${Backslash}ud800": 1}""")
    val written =
      intercept[Exception](DshaWriter.write(df, new File(tempDir(), "w").getPath, "parquet", "overwrite", Nil))
    assert(written.getMessage.contains(s"`a${Backslash}uD800`"), written.getMessage)
    val file = jsonFile(s"""{"a${Backslash}ud800": 1}""")
    val read = intercept[Exception](
      PathDigest.fingerprint(
        spark,
        file.getParent,
        "json",
        None,
        Utf8,
        None,
        updateManifest = false,
        useCache = false
      )
    )
    assert(read.getMessage.contains(s"`a${Backslash}uD800`"), read.getMessage)
  }
}
