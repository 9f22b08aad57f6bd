package io.dsha.files

import java.util.Locale

import org.apache.hadoop.fs.Path
import org.apache.spark.internal.io.FileCommitProtocol
import org.apache.spark.sql.{DataFrame, SaveMode}
import org.apache.spark.sql.execution.SQLExecution
import org.apache.spark.sql.execution.datasources.{DataSource, FileFormat, FileFormatWriter}
import org.apache.spark.sql.execution.datasources.v2.FileDataSourceV2

import io.dsha.aggregate.DigestState.Portable
import io.dsha.algorithm.{Algorithm, DshaV1}
import io.dsha.shims.SparkShims
import io.dsha.types.CanonicalSchema

/**
 * `dsha.write`: writes a DataFrame like `df.write` and digests it in the same pass, exactly: the digest is the merge
 * of the states of the files the job committed ([[FileStatesTracker]]), so retried, speculative and failed task
 * attempts count nothing. Then a manifest of the files' states goes beside the data (`_dsha/manifest.json`, written
 * after the job committed; for Parquet and ORC, whose files read back exactly the rows written).
 */
object DshaWriter {

  /** What a write produced: the state of the rows written, the manifest (if written), and notes for the user. */
  final case class Result(
      state: Portable,
      manifest: Option[String],
      files: Seq[Manifest.Entry],
      warnings: Seq[String],
      ignored: Boolean = false
  ) {
    def stateBytes: Array[Byte] = state.toBytes
    def warningsArray: Array[String] = warnings.toArray
  }

  /** Formats whose files read back exactly the rows written, so their states can stand for the files later. */
  val ManifestFormats: Set[String] = Set("parquet", "orc")

  def write(
      df: DataFrame,
      path: String,
      format: String = "parquet",
      mode: String = "errorifexists",
      partitionBy: Seq[String] = Nil,
      options: Map[String, String] = Map.empty,
      algorithm: Algorithm = DshaV1
  ): Result = {
    val qe = SparkShims.queryExecution(df)
    val spark = qe.sparkSession
    val conf = spark.sessionState.conf
    val saveMode = parseMode(mode)
    val output = qe.analyzed.output
    val resolver = conf.resolver
    val names = output.map(_.name)
    val duplicates = names.groupBy(n => if (conf.caseSensitiveAnalysis) n else n.toLowerCase(Locale.ROOT))
      .collect { case (_, ns) if ns.size > 1 => ns.head }
    if (duplicates.nonEmpty) {
      fail(s"the DataFrame has duplicate column names: ${duplicates.mkString(", ")}; rename them before writing")
    }
    val partitions = partitionBy.map { p =>
      output.find(a => resolver(a.name, p)).getOrElse(
        fail(s"partition column `$p` is not a column of the DataFrame (columns: ${names.mkString(", ")})")
      )
    }
    if (partitions.nonEmpty && partitions.size == output.size) {
      fail("cannot partition by every column: a file would hold no column")
    }
    val overwriteMode = options.find(_._1.equalsIgnoreCase("partitionOverwriteMode")).map(_._2)
      .getOrElse(conf.getConfString("spark.sql.sources.partitionOverwriteMode", "static"))
    if (saveMode == SaveMode.Overwrite && partitions.nonEmpty && overwriteMode.equalsIgnoreCase("dynamic")) {
      fail("dynamic partition overwrite (partitionOverwriteMode=dynamic) is not supported: dsha.write(mode=" +
        "\"overwrite\") replaces the whole directory, whose digest it then knows")
    }
    val fileFormat = resolveFormat(format, spark.sessionState.conf)
    val schema =
      try CanonicalSchema.of(output.map(a => a.name -> a.dataType), algorithm.description)
      catch { case e: CanonicalSchema.Unsupported => fail(s"cannot hash column ${e.path}: ${e.reason}") }
    val data = output.filterNot(a => partitions.exists(_.exprId == a.exprId))
    val layout = data ++ partitions
    val ordinals = output.map(a => layout.indexWhere(_.exprId == a.exprId)).toIndexedSeq
    val tracker = new FileStatesTracker(schema, algorithm, data, partitions, ordinals)

    val hadoopConf = spark.sessionState.newHadoopConfWithOptions(options)
    val outputPath = new Path(path)
    val fs = outputPath.getFileSystem(hadoopConf)
    val root = fs.makeQualified(outputPath)
    val manifestPath = Manifest.beside(root)
    val exists = fs.exists(root)
    val warnings = Seq.newBuilder[String]
    saveMode match {
      case SaveMode.ErrorIfExists if exists =>
        fail(s"path $root already exists (mode 'errorifexists'; use mode 'overwrite' or 'append')")
      case SaveMode.Ignore if exists =>
        return Result(
          Portable.zero(algorithm, schema),
          None,
          Nil,
          Seq(s"nothing written: $root exists (mode 'ignore')"),
          ignored = true
        )
      case SaveMode.Overwrite if exists =>
        val reads = df.inputFiles.exists(f => FileListing.relative(root, new Path(f)).isDefined)
        if (reads) fail(s"cannot overwrite $root: the DataFrame reads from it")
        // The manifest goes first: a delete interrupted half-way must not leave it claiming the old digest.
        Manifest.delete(fs, manifestPath)
        if (!fs.delete(root, true)) fail(s"cannot delete $root to overwrite it")
      case _ =>
    }
    // An append keeps the states of the files already there, if their manifest can be trusted.
    val previous = if (saveMode == SaveMode.Append) Manifest.read(fs, manifestPath) else None

    val jobId = java.util.UUID.randomUUID().toString
    val committer = FileCommitProtocol.instantiate(conf.fileCommitProtocolClass, jobId, root.toString, false)
    SQLExecution.withNewExecutionId(qe, Some(s"dsha.write to $root")) {
      SparkFileWriter.write(
        spark,
        qe.executedPlan,
        fileFormat,
        committer,
        FileFormatWriter.OutputSpec(root.toString, Map.empty, output),
        hadoopConf,
        partitions.toList,
        List(tracker),
        options
      )
    }

    val committed = tracker.files
    val written = committed.foldLeft(Portable.zero(algorithm, schema)) {
      (s, f) => s.merge(Portable(algorithm, schema, f.rows, f.words))
    }
    val formatName = format.toLowerCase(Locale.ROOT)
    if (!ManifestFormats(formatName)) {
      warnings += s"no manifest written for format '$format' (only for ${ManifestFormats.toSeq.sorted.mkString(", ")}:" +
        " rows read back from other formats can differ from the rows written)"
      return Result(written, None, Nil, warnings.result())
    }
    val listed = FileListing.of(spark.read.format(format).options(options).schema(df.schema).load(root.toString))
      .flatMap(st => FileListing.relative(root, st.getPath).map(_ -> st)).toMap
    val entries = committed.map { f =>
      listed.get(f.path).map(st => Manifest.Entry(f.path, st.getLen, st.getModificationTime, f.rows, f.words))
    }
    if (entries.exists(_.isEmpty)) {
      val missing = committed.zip(entries).collect { case (f, None) => f.path }
      warnings += s"no manifest written: committed files not found under $root after the commit: " +
        missing.take(3).mkString(", ")
      return Result(written, None, Nil, warnings.result())
    }
    val fresh = entries.flatten
    val kept = previous match {
      case Some(Right(m)) =>
        val mismatch = Manifest.algorithmMismatch(m, algorithm).orElse(
          if (!m.schemaDigest.sameElements(schema.digest)) Some(s"it was for the schema ${m.schemaText}")
          else if (m.format != formatName) Some(s"it was for format ${m.format}")
          else None
        )
        mismatch.foreach(r =>
          warnings += s"the manifest of $root was not kept ($r): it now covers only the files " +
            "this write added"
        )
        val freshPaths = fresh.map(_.path).toSet
        if (mismatch.isDefined) Nil
        else m.files.filter(e =>
          !freshPaths(e.path) &&
            listed.get(e.path).exists(st => e.matches(st.getLen, st.getModificationTime))
        )
      case Some(Left(reason)) =>
        warnings += s"the manifest of $root was ignored ($reason): it now covers only the files this write added"
        Nil
      case None => Nil
    }
    val manifest = Manifest(
      algorithm,
      formatName,
      root.toString,
      schema.text,
      schema.digest,
      (kept ++ fresh).sortBy(_.path)(Manifest.PathOrder).toIndexedSeq,
      Manifest.keyIdOf(algorithm)
    )
    Manifest.write(fs, manifestPath, manifest)
    Result(written, Some(manifestPath.toString), fresh, warnings.result())
  }

  private def parseMode(mode: String): SaveMode = mode.toLowerCase(Locale.ROOT) match {
    case "errorifexists" | "error" | "default" => SaveMode.ErrorIfExists
    case "overwrite" => SaveMode.Overwrite
    case "append" => SaveMode.Append
    case "ignore" => SaveMode.Ignore
    case other => fail(s"unknown mode '$other' (errorifexists, overwrite, append, ignore)")
  }

  private def resolveFormat(format: String, conf: org.apache.spark.sql.internal.SQLConf): FileFormat = {
    val cls = DataSource.lookupDataSource(format, conf)
    cls.getConstructor().newInstance() match {
      case f: FileFormat => f
      case v2: FileDataSourceV2 => v2.fallbackFileFormat.getConstructor().newInstance()
      case _ => fail(s"format '$format' is not a file format (parquet, orc, json, csv, text, avro, ...)")
    }
  }

  private def fail(message: String): Nothing = throw new IllegalArgumentException(s"dsha.write: $message")
}
