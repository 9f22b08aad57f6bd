package io.dsha

import java.io.File
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.{Files, StandardCopyOption}

import scala.jdk.CollectionConverters._

import org.apache.spark.TaskContext
import org.apache.spark.sql.{DataFrame, Row}
import org.apache.spark.sql.types._

import io.dsha.files.{DshaWriter, Manifest, PathDigest}
import io.dsha.output.DigestFormat

/**
 * Digests computed while writing (DshaWriter) and re-digests of paths from their manifests (PathDigest): each result
 * is checked against dsha(*) of the files read back in full, under random tables, partitioning, retried tasks,
 * appends, overwrites and every kind of change to the files.
 */
class FileDigestSuite extends SparkSuite {

  private def digest(state: aggregate.DigestState.Portable): String =
    DigestFormat.digestString(state.algorithm, state.schemaDigest, state.rows, state.words).toString

  private def readBack(dir: File, schema: StructType, format: String = "parquet"): DataFrame =
    spark.read.format(format).schema(schema).load(dir.getPath)

  private def manifestOf(dir: File): Manifest = {
    val text = new String(Files.readAllBytes(new File(dir, "_dsha/manifest.json").toPath), UTF_8)
    Manifest.parse(text).fold(r => fail(s"manifest not trusted: $r"), identity)
  }

  private def randomTable(seed: Long, rows: Int): DataFrame = {
    val random = new RandomTables(seed)
    val schema = random.structType(2 + random.random.nextInt(3), depth = 2)
      .add(StructField("p", IntegerType))
    val data = random.rows(schema, rows).map(r => Row.fromSeq(r.toSeq.init :+ (random.random.nextInt(4) - 1)))
    spark.createDataFrame(data.asJava, schema).repartition(3)
  }

  private def pathDigest(
      dir: File,
      update: Boolean = false,
      state: Option[File] = None,
      useCache: Boolean = true,
      format: String = "parquet",
      options: Map[String, String] = Map.empty,
      schema: Option[StructType] = None
  ): PathDigest.Result =
    PathDigest.fingerprint(spark, dir.getPath, format, schema, options, state.map(_.getPath), update, useCache)

  test("the digest of a write equals dsha(*) of the files read back, in every mode; its manifest covers them") {
    // The writer's row encoder is generated or interpreted per spark.sql.codegen.factoryMode: seeds cycle the modes.
    for (seed <- 1 to 8; (name, conf) = modes(seed % modes.size)) withConf(conf) {
      val df = randomTable(seed, rows = 40 * seed)
      val dir = new File(tempDir(), "t")
      val partitionBy = if (seed % 2 == 0) Seq("p") else Nil
      val format = if (seed % 3 == 0) "orc" else "parquet"
      val result = DshaWriter.write(df, dir.getPath, format, "errorifexists", partitionBy)
      val expected = digestOf(df)
      assert(digest(result.state) == expected, s"seed $seed, $name")
      assert(digestOf(readBack(dir, df.schema, format)) == expected, s"seed $seed, $name: read back")
      assert(result.state.rows == df.count())
      val manifest = manifestOf(dir)
      assert(digest(manifest.state) == expected)
      assert(manifest.files.map(_.path).toSet == result.files.map(_.path).toSet)
      if (partitionBy.nonEmpty) assert(manifest.files.forall(_.path.startsWith("p=")), manifest.files.map(_.path))
      val again = pathDigest(dir, format = format, schema = Some(df.schema))
      assert(digest(again.state) == expected)
      assert((again.filesRead, again.filesReused) == ((0, manifest.files.size)))
    }
  }

  test("concurrent partition writers whose files roll over: each file keeps its own partition's values") {
    val df = spark.range(0, 700, 1, 3).selectExpr("id", "id % 13 AS p", "CAST(id % 5 AS STRING) AS q")
    for (concurrent <- Seq("0", "4")) {
      withConf(Map(
        "spark.sql.maxConcurrentOutputFileWriters" -> concurrent,
        "spark.sql.files.maxRecordsPerFile" -> "7"
      )) {
        val dir = new File(tempDir(), "t")
        val result = DshaWriter.write(df, dir.getPath, partitionBy = Seq("p", "q"))
        assert(digest(result.state) == digestOf(df), s"$concurrent concurrent writers")
        assert(digest(manifestOf(dir).state) == digestOf(readBack(dir, df.schema)))
        assert(manifestOf(dir).files.size >= 700 / 7)
      }
    }
  }

  test("empty input: the digest of no rows, one empty file in its manifest") {
    val df = spark.range(0).selectExpr("id", "CAST(id AS STRING) AS s")
    val dir = new File(tempDir(), "t")
    val result = DshaWriter.write(df, dir.getPath)
    assert(result.state.rows == 0)
    assert(digest(result.state) == digestOf(df))
    assert(digest(manifestOf(dir).state) == digestOf(readBack(dir, df.schema)))
  }

  test("tasks that fail on their first attempt after writing part of their file are counted once") {
    spark.udf.register(
      "dsha_test_fail_first",
      (x: Long) => {
        if (TaskContext.get().attemptNumber() == 0 && x % 100 == 77) throw new RuntimeException("injected failure")
        x
      }
    )
    val df = spark.range(0, 1000, 1, 4).selectExpr("dsha_test_fail_first(id) AS id", "CAST(id * 7 AS STRING) AS s")
    val clean = spark.range(0, 1000, 1, 4).selectExpr("id", "CAST(id * 7 AS STRING) AS s")
    val dir = new File(tempDir(), "t")
    val result = DshaWriter.write(df, dir.getPath)
    assert(digest(result.state) == digestOf(clean))
    assert(result.state.rows == 1000)
    assert(digestOf(readBack(dir, clean.schema)) == digestOf(clean))
    assert(digest(manifestOf(dir).state) == digestOf(clean))
  }

  test("a write that fails leaves no manifest; mode errorifexists refuses an existing path") {
    spark.udf.register(
      "dsha_test_fail_always",
      (x: Long) => {
        if (x == 500) throw new RuntimeException("injected failure")
        x
      }
    )
    val dir = new File(tempDir(), "t")
    val bad = spark.range(0, 1000, 1, 4).selectExpr("dsha_test_fail_always(id) AS id")
    intercept[Exception](DshaWriter.write(bad, dir.getPath))
    assert(!new File(dir, "_dsha/manifest.json").exists())
    val other = new File(tempDir(), "t").getPath
    DshaWriter.write(spark.range(3).toDF(), other)
    val e = intercept[IllegalArgumentException](DshaWriter.write(spark.range(3).toDF(), other))
    assert(e.getMessage.contains("already exists"))
  }

  test("overwrite replaces data and manifest; append adds the new files' states to the manifest") {
    val dir = new File(tempDir(), "t")
    val a = spark.range(0, 500, 1, 3).selectExpr("id", "id % 3 AS p")
    val b = spark.range(1000, 1200, 1, 2).selectExpr("id", "id % 3 AS p")
    DshaWriter.write(a, dir.getPath, partitionBy = Seq("p"))
    val appended = DshaWriter.write(b, dir.getPath, mode = "append", partitionBy = Seq("p"))
    assert(digest(appended.state) == digestOf(b))
    val all = readBack(dir, a.schema)
    assert(digestOf(all) == digestOf(a.union(b)))
    assert(digest(manifestOf(dir).state) == digestOf(all))
    assert(pathDigest(dir, schema = Some(a.schema)).filesRead == 0)
    val overwritten = DshaWriter.write(b, dir.getPath, mode = "overwrite", partitionBy = Seq("p"))
    assert(digest(overwritten.state) == digestOf(b))
    assert(digest(manifestOf(dir).state) == digestOf(readBack(dir, b.schema)))
    val e = intercept[IllegalArgumentException](
      DshaWriter.write(readBack(dir, b.schema), dir.getPath, mode = "overwrite")
    )
    assert(e.getMessage.contains("reads from it"))
    assert(digestOf(readBack(dir, b.schema)) == digestOf(b), "the refused overwrite lost data")
  }

  test("clear errors: unknown mode, partition column, format, dynamic overwrite, a type the format cannot store") {
    val df = spark.range(3).selectExpr("id", "id AS p")
    def error(f: => Any): String = intercept[Exception](f).getMessage
    val dir = new File(tempDir(), "t").getPath
    assert(error(DshaWriter.write(df, dir, mode = "sometimes")).contains("unknown mode 'sometimes'"))
    assert(error(DshaWriter.write(df, dir, partitionBy = Seq("q"))).contains("partition column `q`"))
    assert(error(DshaWriter.write(df, dir, format = "noop")).contains("not a file format"))
    assert(error(DshaWriter.write(
      df,
      dir,
      mode = "overwrite",
      partitionBy = Seq("p"),
      options = Map("partitionOverwriteMode" -> "dynamic")
    )).contains("partitionOverwriteMode=dynamic"))
    assert(error(DshaWriter.write(spark.sql("SELECT make_interval(1, 2) AS i"), dir)).toLowerCase.contains("interval"))
    assert(!new File(dir).exists(), "a refused write created its directory")
  }

  test("re-digests read only added and changed files, drop removed ones, and equal a full re-hash") {
    val dir = new File(tempDir(), "t")
    val df = spark.range(0, 3000, 1, 6).selectExpr("id", "CAST(id AS STRING) AS s")
    DshaWriter.write(df, dir.getPath)
    def parts: Seq[File] = dir.listFiles().filter(_.getName.startsWith("part-")).sortBy(_.getName).toSeq
    // Hadoop's local file system keeps a checksum beside each file: changing a file by hand drops it.
    def crcOf(f: File): java.nio.file.Path = new File(f.getParentFile, "." + f.getName + ".crc").toPath
    def full: String = digestOf(spark.read.parquet(dir.getPath))
    def check(what: String, read: Int): Unit = {
      val r = pathDigest(dir, update = true)
      assert(digest(r.state) == full, what)
      assert(r.filesRead == read, s"$what: files read")
      assert(r.filesReused == parts.size - read, s"$what: files reused")
      assert(r.warnings.isEmpty, r.warnings)
      assert(pathDigest(dir).filesRead == 0, s"$what: the updated manifest covers every file")
    }
    assert(parts.size == 6)
    check("unchanged", read = 0)
    spark.range(5000, 5100, 1, 1).selectExpr("id", "CAST(id AS STRING) AS s").write.mode("append").parquet(dir.getPath)
    check("a file added", read = 1)
    Files.deleteIfExists(crcOf(parts.head))
    Files.delete(parts.head.toPath)
    check("a file removed", read = 0)
    val other = new File(tempDir(), "o")
    spark.range(7000, 7400, 1, 1).selectExpr("id", "CAST(id AS STRING) AS s").write.parquet(other.getPath)
    val replacement = other.listFiles().find(_.getName.endsWith(".parquet")).get
    Thread.sleep(5) // a modification time the old file cannot have
    Files.deleteIfExists(crcOf(parts(1)))
    Files.copy(replacement.toPath, parts(1).toPath, StandardCopyOption.REPLACE_EXISTING)
    check("a file rewritten", read = 1)
    Files.deleteIfExists(crcOf(parts(2)))
    Files.move(parts(2).toPath, new File(dir, "part-renamed.parquet").toPath)
    check("a file renamed", read = 1)
    val noCache = pathDigest(dir, useCache = false)
    assert(noCache.filesRead == parts.size && digest(noCache.state) == full)
  }

  test("files named like glob patterns are re-read as themselves, one changed file or two") {
    val dir = new File(tempDir(), "t")
    dir.mkdirs()
    // x[1] and y? are patterns that match x1 and ya; {a,b} one that matches neither.
    val names = Seq("x1", "x[1]", "ya", "y?", "{a,b}", "z1", "z2", "z3", "z4", "z5").map(_ + ".parquet")
    def writeFile(name: String, from: Long, rows: Long): Unit = {
      val out = new File(tempDir(), "w")
      spark.range(from, from + rows, 1, 1).selectExpr("id", "CAST(id AS STRING) AS s").write.parquet(out.getPath)
      val written = out.listFiles().find(_.getName.endsWith(".parquet")).get
      Files.copy(written.toPath, new File(dir, name).toPath, StandardCopyOption.REPLACE_EXISTING)
    }
    names.zipWithIndex.foreach { case (n, i) => writeFile(n, i * 1000L, 10L + i) }
    def full: String = digestOf(spark.read.parquet(dir.getPath))
    assert(digest(pathDigest(dir, update = true).state) == full)
    Thread.sleep(5) // a modification time the old files cannot have
    writeFile("x[1].parquet", 50000, 203)
    val one = pathDigest(dir, update = true)
    assert(one.filesRead == 1 && digest(one.state) == full, "x[1].parquet changed, x1.parquet not")
    Thread.sleep(5)
    writeFile("y?.parquet", 60000, 77)
    writeFile("{a,b}.parquet", 70000, 5)
    val two = pathDigest(dir, update = true)
    assert(two.filesRead == 2 && digest(two.state) == full, "y?.parquet and {a,b}.parquet changed")
    assert(pathDigest(dir).filesRead == 0 && digest(pathDigest(dir, useCache = false).state) == full)
  }

  test("a CSV table with a state file elsewhere: truncated files are re-read; nothing is written into the data") {
    val dir = new File(tempDir(), "t")
    spark.range(0, 400, 1, 4).selectExpr("id", "CAST(id * 3 AS STRING) AS s").write.csv(dir.getPath)
    val schema = StructType(Seq(StructField("id", LongType), StructField("s", StringType)))
    val cache = new File(tempDir(), "cache.json")
    def full: String = digestOf(spark.read.schema(schema).csv(dir.getPath))
    val first = pathDigest(dir, state = Some(cache), format = "csv", schema = Some(schema))
    assert(first.filesRead == 4 && digest(first.state) == full && cache.isFile)
    assert(!new File(dir, "_dsha").exists(), "a read wrote into the data")
    val part = dir.listFiles().filter(_.getName.startsWith("part-")).maxBy(_.length())
    val lines = Files.readAllLines(part.toPath).asScala
    Thread.sleep(5)
    Files.deleteIfExists(new File(dir, "." + part.getName + ".crc").toPath)
    Files.write(part.toPath, lines.take(lines.size / 2).map(_ + "\n").mkString.getBytes(UTF_8))
    val second = pathDigest(dir, state = Some(cache), format = "csv", schema = Some(schema))
    assert((second.filesRead, second.filesReused) == ((1, 3)))
    assert(digest(second.state) == full)
    assert(second.state.rows < first.state.rows)
  }

  test("a manifest that disagrees with the files is ignored with a warning, never trusted") {
    val dir = new File(tempDir(), "t")
    val df = spark.range(0, 600, 1, 3).selectExpr("id", "id * 2 AS v")
    DshaWriter.write(df, dir.getPath)
    val file = new File(dir, "_dsha/manifest.json")
    val original = new String(Files.readAllBytes(file.toPath), UTF_8)
    val expected = digestOf(df)
    val firstSum = "\"sum\" : \"([0-9a-f]{32})\"".r.findFirstMatchIn(original).get.group(1)
    val edits = Seq(
      "a state edited" -> original.replace(firstSum, firstSum.reverse),
      "truncated" -> original.take(original.length / 2),
      "another algorithm" -> original.replace("\"dsha-v1\"", "\"dsha-v9\""),
      "not JSON" -> "garbage",
      // Spellings the checksum (computed over the values read) would not see: refused as SPEC.md §12.1/§12.3 say.
      "a sum in upper case" -> original.replace(firstSum, firstSum.toUpperCase(java.util.Locale.ROOT)),
      "a sum in other digits" -> original.replace(firstSum, firstSum.map(c => if (c == '1') '\u0661' else c)),
      "a member twice" -> original.replace("\"format\" : \"parquet\"", "\"format\" : \"orc\", \"format\" : \"parquet\"")
    )
    assert(firstSum.exists(_.isLetter) && firstSum.contains('1') && original.contains("\"format\" : \"parquet\""))
    for ((what, text) <- edits) {
      Files.write(file.toPath, text.getBytes(UTF_8))
      val r = pathDigest(dir)
      assert(digest(r.state) == expected, what)
      assert(r.filesRead == 3, what)
      assert(r.warnings.exists(_.contains("ignored the manifest")), s"$what: ${r.warnings}")
    }
    Files.write(file.toPath, original.getBytes(UTF_8))
    val otherSchema = pathDigest(dir, schema = Some(StructType(Seq(StructField("id", LongType)))))
    assert(otherSchema.filesRead == 3 && otherSchema.warnings.exists(_.contains("schema")))
    assert(digest(otherSchema.state) == digestOf(spark.read.parquet(dir.getPath).select("id")))
  }

  test("the manifest's JSON: every field, and the digest of the whole directory") {
    val dir = new File(tempDir(), "t")
    val df = spark.range(0, 10, 1, 2).selectExpr("id")
    DshaWriter.write(df, dir.getPath)
    val m = manifestOf(dir)
    val json = new com.fasterxml.jackson.databind.ObjectMapper()
      .readTree(new File(dir, "_dsha/manifest.json"))
    assert(json.get("dsha").asText == "manifest" && json.get("version").asInt == 1)
    assert(json.get("digest").asText == digestOf(df) && json.get("rows").asLong == 10)
    assert(json.get("schema").asText == "struct<\"id\":bigint>")
    assert(m.files.map(_.rows).sum == 10 && m.files.forall(f => new File(dir, f.path).length() == f.size))
    assert(Manifest.parse(m.toJson).map(_.toJson) == Right(m.toJson))
  }
}
