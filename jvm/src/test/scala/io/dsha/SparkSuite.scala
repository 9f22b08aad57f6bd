package io.dsha

import java.io.File

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.scalatest.funsuite.AnyFunSuite

import io.dsha.registration.DshaExtensions

/**
 * A local Spark session with dsha loaded through spark.sql.extensions, and helpers to run in every execution mode: both
 * codegen modes with Spark's aggregate, and both with the partial step that hashes row bytes.
 */
trait SparkSuite extends AnyFunSuite {

  lazy val spark: SparkSession = SparkSuite.session

  /**
   * Generated code (whole-stage and expression codegen only) versus the interpreted path (no codegen at all), both with
   * Spark's aggregate; then both again with dsha's partial step where it applies (HashRowBytes), whose row writer is
   * generated or interpreted by the same setting. Defined once for Scala and Python: tests/execution_modes.json.
   */
  val modes: Seq[(String, Map[String, String])] = SparkSuite.modes

  def withConf[T](conf: Map[String, String])(f: => T): T = {
    val previous = conf.keys.map(k => k -> spark.conf.getOption(k)).toMap
    conf.foreach { case (k, v) => spark.conf.set(k, v) }
    try f
    finally previous.foreach {
        case (k, Some(v)) => spark.conf.set(k, v)
        case (k, None) => spark.conf.unset(k)
      }
  }

  /** Runs `f` once per mode and returns the results by mode name. */
  def inAllModes[T](f: => T): Map[String, T] = inModes(modes)(f)

  private def inModes[T](chosen: Seq[(String, Map[String, String])])(f: => T): Map[String, T] =
    chosen.map { case (name, conf) => name -> withConf(conf)(f) }.toMap

  /** Asserts `f` gives the same result in every mode, and returns it. */
  def sameInAllModes[T](f: => T): T = sameIn(modes)(f)

  /**
   * Asserts `f` gives the same result in the modes chosen by `index`, and returns it: on the full builds, two of the
   * four modes, one generated and one interpreted, one of them through the row-bytes step (an even `index` takes
   * generated code with Spark's aggregate and the interpreted row-bytes step, an odd one the other two); on a partial
   * build ([[SparkSuite.partialBuild]]), one of those two, by `index / 2`, so that every four consecutive indices still
   * run all four modes. For files of golden vectors of another algorithm than dsha-v1, whose vectors run by index:
   * what such an algorithm adds (its row hasher and combiner) does not depend on the column types, and how each type
   * is read, in each mode, is the same for every algorithm and checked by GoldenVectorsSuite on every vector in all
   * four modes, on every build.
   */
  def sameInModesByIndex[T](index: Int)(f: => T): T = {
    val chosen = half(index)
    sameIn(if (SparkSuite.partialBuild) Seq(chosen((index / 2) % 2)) else chosen)(f)
  }

  /**
   * [[sameInAllModes]] on the full builds; on a partial build ([[SparkSuite.partialBuild]]) the two modes of `index`'s
   * half (as [[sameInModesByIndex]]: one generated, one interpreted, one of them through the row-bytes step), so that
   * two consecutive indices still run all four there. For tests whose cost is each mode's planning and compiling of
   * the same large query (1,500 columns, every documented example).
   */
  def sameInBuildModes[T](index: Int)(f: => T): T =
    if (SparkSuite.partialBuild) sameIn(half(index))(f) else sameInAllModes(f)

  /**
   * Asserts `f` gives the same result in the modes that differ for a projection, and returns it: generated code and the
   * interpreted path (the row-bytes step, `spark.dsha.hashRowBytes`, changes only aggregates and digest filters, so its
   * modes would run the same projection twice).
   */
  def sameInProjectionModes[T](f: => T): T = sameIn(modes.filterNot { case (_, conf) => rowBytes(conf) })(f)

  /** Whether a mode hashes rows from their bytes where it can (dsha's row-bytes step). */
  private def rowBytes(conf: Map[String, String]): Boolean = conf.get("spark.dsha.hashRowBytes").contains("true")

  /** Half the modes by the parity of `index`: generated code with Spark's aggregate and the interpreted row-bytes
   * step (even), or the other two (odd). */
  private def half(index: Int): Seq[(String, Map[String, String])] = {
    def generated(conf: Map[String, String]) = conf.get("spark.sql.codegen.factoryMode").contains("CODEGEN_ONLY")
    val chosen = modes.filter { case (_, conf) => (generated(conf) == rowBytes(conf)) == (index % 2 == 1) }
    require(chosen.size == 2, s"half the modes are two, not ${chosen.map(_._1)}")
    chosen
  }

  private def sameIn[T](chosen: Seq[(String, Map[String, String])])(f: => T): T = {
    require(chosen.nonEmpty, "no execution mode chosen")
    val results = inModes(chosen)(f)
    chosen.tail.foreach { case (name, _) =>
      assert(results(name) == results(chosen.head._1), s"results differ: ${chosen.head._1} versus $name")
    }
    results(chosen.head._1)
  }

  /** dsha(*) of a DataFrame, computed after a shuffle so that no optimizer rule can fold it on the driver. */
  def digestOf(df: DataFrame): String =
    df.repartition(3).selectExpr("dsha(*) AS d").collect().head.getString(0)

  def tempDir(): File = {
    val d = java.nio.file.Files.createTempDirectory("dsha-test").toFile
    d.deleteOnExit()
    d
  }
}

object SparkSuite {
  lazy val session: SparkSession = SparkSession.builder()
    .master("local[2,2]") // a task may fail once: the retry tests need it
    .appName("dsha-tests")
    .config("spark.sql.extensions", classOf[DshaExtensions].getName)
    .config("spark.sql.shuffle.partitions", "4")
    .config("spark.ui.enabled", "false")
    .config("spark.sql.session.timeZone", "UTC")
    .config("spark.sql.adaptive.enabled", "false")
    // Spark 4's defaults; Spark 3.5 refuses to write dates before 1582 to Parquet (WRITE_ANCIENT_DATETIME) without them.
    .config("spark.sql.parquet.datetimeRebaseModeInWrite", "CORRECTED")
    .config("spark.sql.parquet.int96RebaseModeInWrite", "CORRECTED")
    .getOrCreate()

  /**
   * Whether this JVM runs the suite for one of the test plan's builds other than its newest line (dev/run's
   * `partial_scala_suite`: `-Ddsha.test.build=partial`; default `full`). Such a build runs every test, with fewer of
   * what does not depend on the build: a quarter of the property suites' random tables ([[randomTableSeeds]]) and
   * every fourth vector of the other algorithms' golden files, in one execution mode ([[entriesOfThisBuild]]).
   */
  lazy val partialBuild: Boolean = sys.props.getOrElse("dsha.test.build", "full") match {
    case "full" => false
    case "partial" => true
    case other => throw new IllegalArgumentException(s"-Ddsha.test.build=$other: use full or partial")
  }

  /**
   * Seeds `1 to n` of a property suite's random tables, or the first quarter of them (at least 1) on a partial build
   * ([[partialBuild]]), where what these tables add to the golden vectors (the algorithm's invariances over random
   * schemas) is the same as on the full ones.
   */
  def randomTableSeeds(n: Int): Range = if (partialBuild) 1 to math.max(1, n / 4) else 1 to n

  /**
   * The entries of a golden vector file of another algorithm than dsha-v1 (secure, keyed-v2, sketch) that this build
   * checks, each with the index that chooses its execution modes ([[SparkSuite#sameInModesByIndex]]): all of them, by
   * their position, on the full builds; on a partial build ([[partialBuild]]) every fourth one, starting at an offset
   * of the Spark line (3.5, 4.0, 4.1 and 4.2 each take another quarter, so that the partial builds together check
   * every entry), indexed 0, 1, 2... so that four consecutive ones still take all four modes. What such a file adds to
   * vectors.json, the algorithm's row hasher and combiner, is plain JVM code that does not depend on the build; what
   * does (the aggregate's buffer, merge and serialisation in each mode, and how each type is read: GoldenVectorsSuite,
   * every vector in all four modes) runs on every build.
   */
  def entriesOfThisBuild[T](entries: Seq[T]): Seq[(T, Int)] =
    if (!partialBuild) entries.zipWithIndex
    else {
      val (major, minor) = majorMinor(org.apache.spark.SPARK_VERSION)
      val offset = (major * 10 + minor) % 4
      entries.zipWithIndex.collect { case (e, i) if i % 4 == offset => (e, i / 4) }
    }

  /** Whether a Spark version ("4.0.1", "4.1.0-preview2") is at least a required major.minor ("4.1"). */
  def atLeast(version: String, required: String): Boolean = {
    val ((a0, a1), (b0, b1)) = (majorMinor(version), majorMinor(required))
    a0 > b0 || (a0 == b0 && a1 >= b1)
  }

  /** The major and minor numbers of a version ("4.1.0-preview2": (4, 1)). */
  private def majorMinor(version: String): (Int, Int) = {
    val parts = version.split("[.-]").take(2).map(_.toInt)
    (parts(0), parts(1))
  }

  lazy val modes: Seq[(String, Map[String, String])] = {
    val doc = new ObjectMapper().readTree(new File(repoRoot, "tests/execution_modes.json"))
    doc.get("modes").fields().asScala.map { mode =>
      mode.getKey -> mode.getValue.get("conf").fields().asScala.map(c => c.getKey -> c.getValue.asText()).toMap
    }.toSeq
  }

  /** The repository root: tests read tests/golden/ from there whatever the working directory. */
  lazy val repoRoot: File = {
    var d = new File(".").getCanonicalFile
    while (d != null && !new File(d, "tests/golden/vectors.json").exists()) d = d.getParentFile
    require(d != null, "cannot find tests/golden/vectors.json above the working directory")
    d
  }
}
