package io.dsha.files

import java.util.Locale

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.{functions => F, DataFrame, SparkSession}
import org.apache.spark.sql.types.StructType

import io.dsha.aggregate.DigestState
import io.dsha.aggregate.DigestState.Portable
import io.dsha.algorithm.{Algorithm, DshaV1}
import io.dsha.functions.state_in
import io.dsha.shims.SparkShims
import io.dsha.types.CanonicalSchema

/**
 * The digest of the files at a path, re-using the states of a manifest for the files that did not change: a file
 * whose path, size and modification time match its manifest entry is not read; new and changed files are hashed,
 * one state per file, in one job; entries of removed files are dropped. The result is the digest of
 * `spark.read.format(format).load(path)`, as `dsha(*)` computes it.
 *
 * Nothing is written unless asked: `updateManifest` (re)writes `_dsha/manifest.json` beside the data, `statePath`
 * names a cache elsewhere (read first when it exists). `useCache = false` reads every file, and so does
 * dsha-secure-v1/v2; a keyed algorithm uses a manifest only when its MAC verifies under the key (SPEC.md §12.3).
 */
object PathDigest {

  final case class Result(
      state: Portable,
      filesTotal: Int,
      filesRead: Int,
      filesReused: Int,
      manifest: Option[String],
      warnings: Seq[String]
  ) {
    def stateBytes: Array[Byte] = state.toBytes
    def manifestOrNull: String = manifest.orNull
    def warningsArray: Array[String] = warnings.toArray
  }

  /** Where the state of each file came from, before hashing what is left. */
  private final case class Plan(reused: Seq[Manifest.Entry], toRead: Seq[(String, FileStatus)], from: Option[String])

  def fingerprint(
      spark: SparkSession,
      path: String,
      format: String = "parquet",
      schema: Option[StructType] = None,
      options: Map[String, String] = Map.empty,
      statePath: Option[String] = None,
      updateManifest: Boolean = false,
      useCache: Boolean = true,
      algorithm: Algorithm = DshaV1
  ): Result = {
    val formatName = format.toLowerCase(Locale.ROOT)
    val reader = spark.read.format(format).options(options)
    val df = schema.fold(reader)(reader.schema).load(path)
    val canonical =
      try CanonicalSchema.of(df.schema.fields.toSeq.map(f => f.name -> f.dataType), algorithm.description)
      catch { case e: CanonicalSchema.Unsupported => fail(s"cannot hash column ${e.path}: ${e.reason}") }
    val hadoopConf = SparkShims.queryExecution(df).sparkSession.sessionState.newHadoopConfWithOptions(options)
    val requested = new Path(path)
    val fs = requested.getFileSystem(hadoopConf)
    val root = fs.makeQualified(requested)
    val isDir = fs.getFileStatus(root).isDirectory
    val base = if (isDir) root else root.getParent
    val listed = FileListing.of(df).map(st =>
      FileListing.relative(base, st.getPath).getOrElse(fail(s"file ${st.getPath} is not below $base")) -> st
    ).sortBy(_._1)(Manifest.PathOrder)
    val warnings = Seq.newBuilder[String]

    val stateFile = statePath.map { p =>
      val at = new Path(p)
      at.getFileSystem(hadoopConf).makeQualified(at) // its own file system: a local cache beside data on S3
    }
    val sources = stateFile.map(at => ("state file", at, true)).toSeq ++
      (if (isDir) Seq(("manifest", Manifest.beside(root), false)) else Nil)
    // dsha-secure-v1/v2 re-read every file: their states are public, so a stored one proves nothing (SPEC.md §12.3).
    val trusted: Option[(String, Manifest)] = if (!useCache || !Manifest.statesUsable(algorithm)) None
    else sources.iterator.flatMap {
      case (what, at, rootMustMatch) =>
        Manifest.read(at.getFileSystem(hadoopConf), at) match {
          case None => None
          case Some(Left(reason)) =>
            warnings += s"ignored the $what $at: $reason"
            None
          case Some(Right(m)) =>
            val mismatch =
              Manifest.algorithmMismatch(m, algorithm).orElse(
                if (m.format != formatName) Some(s"it is for format ${m.format}, not $formatName")
                else if (!m.schemaDigest.sameElements(canonical.digest)) {
                  Some(s"it is for the schema ${m.schemaText}, the files have ${canonical.text}")
                } else if (rootMustMatch && m.root != base.toString) Some(s"it is for ${m.root}, not $base")
                else None
              )
            mismatch.foreach(r => warnings += s"ignored the $what $at: $r")
            if (mismatch.isEmpty) Some(at.toString -> m) else None
        }
    }.toSeq.headOption

    val byPath = trusted.map(_._2.files.map(e => e.path -> e).toMap).getOrElse(Map.empty)
    val (reused, toRead) = listed.partition { case (rel, st) =>
      byPath.get(rel).exists(_.matches(st.getLen, st.getModificationTime))
    }
    val writes = updateManifest || stateFile.isDefined
    if (updateManifest && !isDir) warnings += s"no manifest beside a single file ($root): name a state file instead"

    val zero = Portable.zero(algorithm, canonical)
    val readStates: Seq[(String, FileStatus, DigestState)] =
      if (toRead.isEmpty) Nil
      else if (reused.isEmpty && !writes) {
        // Nothing to reuse or to remember: one global aggregate (dsha's fastest path), attributed to no file.
        val whole = DigestState.parse(df.agg(state_in(spark, algorithm, Seq(F.col("*")))).head().getAs[Array[Byte]](0))
        Seq(("", null, whole.state))
      } else hashFiles(spark, format, options, df, base, isDir, toRead, listed.map(_._1), algorithm)
    val reusedEntries = reused.map { case (rel, _) => byPath(rel) }
    val state = (reusedEntries.map(_.state) ++ readStates.map(_._3)).foldLeft(zero)((s, d) =>
      s.merge(zero.copy(state = d))
    )

    if (writes) {
      val entries = reusedEntries ++ readStates.map { case (rel, st, d) =>
        Manifest.Entry(rel, st.getLen, st.getModificationTime, d.rows, d.words)
      }
      val manifest = Manifest(
        algorithm,
        formatName,
        base.toString,
        canonical.text,
        canonical.digest,
        entries.sortBy(_.path)(Manifest.PathOrder).toIndexedSeq,
        Manifest.keyIdOf(algorithm)
      )
      if (updateManifest && isDir) Manifest.write(fs, Manifest.beside(root), manifest)
      stateFile.foreach(at => Manifest.write(at.getFileSystem(hadoopConf), at, manifest))
    }
    Result(state, listed.size, toRead.size, reused.size, trusted.map(_._1), warnings.result())
  }

  /**
   * One state per file, in one job: the files read with the table's schema, grouped by the file each row is in. Most
   * files changed: the whole directory is read (one listing); one file: a plain aggregate (no grouping).
   */
  private def hashFiles(
      spark: SparkSession,
      format: String,
      options: Map[String, String],
      whole: DataFrame,
      base: Path,
      isDir: Boolean,
      files: Seq[(String, FileStatus)],
      listed: Seq[String],
      algorithm: Algorithm
  ): Seq[(String, FileStatus, DigestState)] = {
    val zero = DigestState.zero(algorithm)
    val readAll = files.size * 2 > listed.size
    val df =
      if (readAll) whole
      else {
        val reader = spark.read.format(format).options(options).schema(whole.schema)
        // basePath keeps the partition columns of files named one by one.
        (if (isDir) reader.option("basePath", base.toString) else reader).load(files.map(f =>
          FileListing.literal(f._2.getPath)
        ): _*)
      }
    val columns = df.columns.toSeq.map(c => F.col("`" + c.replace("`", "``") + "`"))
    if (files.size == 1 && !readAll) {
      val state = DigestState.parse(df.agg(state_in(spark, algorithm, columns)).head().getAs[Array[Byte]](0)).state
      return files.map { case (rel, st) => (rel, st, state) }
    }
    val fileColumn = "__dsha_input_file"
    val states = df.withColumn(fileColumn, F.input_file_name()).groupBy(F.col(fileColumn))
      .agg(state_in(spark, algorithm, columns)).collect()
      .map(r => new Path(new java.net.URI(r.getString(0))) -> DigestState.parse(r.getAs[Array[Byte]](1)).state)
    val byRelative = states.map { case (p, s) => FileListing.relative(base, p).getOrElse(p.toString) -> s }.toMap
    // A file without a group had no rows; rows from a file of no other name would make one of them silently empty.
    val read = (if (readAll) listed else files.map(_._1)).toSet
    byRelative.keys.find(!read(_)).foreach(p => fail(s"rows were read from $p, which is not one of the files listed"))
    files.map { case (rel, st) => (rel, st, byRelative.getOrElse(rel, zero)) }
  }

  private def fail(message: String): Nothing = throw new IllegalArgumentException(s"dsha: $message")
}
