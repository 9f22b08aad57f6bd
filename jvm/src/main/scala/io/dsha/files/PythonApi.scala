package io.dsha.files

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.types.{DataType, StructType}

/** Entry points for the Python package (Py4J): Java collections and nulls instead of Scala defaults and Options. */
object PythonApi {

  def write(
      df: DataFrame,
      path: String,
      format: String,
      mode: String,
      partitionBy: java.util.List[String],
      options: java.util.Map[String, String]
  ): DshaWriter.Result =
    DshaWriter.write(df, path, format, mode, toSeq(partitionBy), toMap(options))

  /** The same with an algorithm id (`dsha-v1`, `dsha-secure-v1`, `dsha-secure-v2`, `dsha-keyed-v1` with a key argument). */
  def write(
      df: DataFrame,
      path: String,
      format: String,
      mode: String,
      partitionBy: java.util.List[String],
      options: java.util.Map[String, String],
      algorithm: String,
      key: String
  ): DshaWriter.Result =
    DshaWriter.write(
      df,
      path,
      format,
      mode,
      toSeq(partitionBy),
      toMap(options),
      Written.byId(df.sparkSession, algorithm, key)
    )

  /** `schemaJson`: a StructType as JSON (`StructType.json`), or null to read the files' own schema. */
  def fingerprintPath(
      spark: SparkSession,
      path: String,
      format: String,
      schemaJson: String,
      options: java.util.Map[String, String],
      statePath: String,
      updateManifest: Boolean,
      useCache: Boolean
  ): PathDigest.Result =
    fingerprintPath(spark, path, format, schemaJson, options, statePath, updateManifest, useCache, null, null)

  /** The same with an algorithm id (null: dsha-v1) and, for `dsha-keyed-v1`, a key argument. */
  def fingerprintPath(
      spark: SparkSession,
      path: String,
      format: String,
      schemaJson: String,
      options: java.util.Map[String, String],
      statePath: String,
      updateManifest: Boolean,
      useCache: Boolean,
      algorithm: String,
      key: String
  ): PathDigest.Result = {
    val schema = Option(schemaJson).map(DataType.fromJson(_).asInstanceOf[StructType])
    PathDigest.fingerprint(
      spark,
      path,
      format,
      schema,
      toMap(options),
      Option(statePath),
      updateManifest,
      useCache,
      Written.byId(spark, algorithm, key)
    )
  }

  def metadataDigest(df: DataFrame): MetadataDigest.Result = MetadataDigest.of(df)

  private def toSeq(list: java.util.List[String]): Seq[String] =
    if (list == null) Nil else (0 until list.size).map(list.get).toList

  private def toMap(map: java.util.Map[String, String]): Map[String, String] =
    if (map == null) Map.empty
    else {
      val entries = map.entrySet().iterator()
      val out = Map.newBuilder[String, String]
      while (entries.hasNext) {
        val e = entries.next()
        out += e.getKey -> e.getValue
      }
      out.result()
    }
}
