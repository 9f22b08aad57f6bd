package io.dsha.files

import org.apache.hadoop.fs.{FileStatus, Path}
import org.apache.spark.sql.DataFrame
import org.apache.spark.sql.execution.datasources.{HadoopFsRelation, LogicalRelation, PartitioningAwareFileIndex}
import org.apache.spark.sql.execution.datasources.v2.{DataSourceV2Relation, FileTable}

import io.dsha.shims.SparkShims

/** The files a DataFrame read from a path reads: Spark's own listing (its hidden-file rules, partition directories). */
private[files] object FileListing {

  def of(df: DataFrame): Seq[FileStatus] = {
    val indexes = SparkShims.queryExecution(df).analyzed.collect {
      case l: LogicalRelation =>
        l.relation match {
          case h: HadoopFsRelation => h.location
          case other => unsupported(other.getClass.getSimpleName)
        }
      case r: DataSourceV2Relation =>
        r.table match {
          case t: FileTable => t.fileIndex
          case other => unsupported(other.getClass.getSimpleName)
        }
    }
    indexes match {
      case Seq(index: PartitioningAwareFileIndex) => index.allFiles().toList
      case _ => unsupported(indexes.map(_.getClass.getSimpleName).mkString(", "))
    }
  }

  /** `file`'s path below `base`, '/'-separated and decoded (as Hadoop names it), or None if it is not below. */
  def relative(base: Path, file: Path): Option[String] = {
    val b = base.toUri.getPath.stripSuffix("/") + "/"
    val f = file.toUri.getPath
    if (f.startsWith(b)) Some(f.substring(b.length)) else None
  }

  /**
   * `file` as a path to load by itself: Spark expands glob patterns in the paths it loads, so a file named like one
   * (`x[1].parquet` beside `x1.parquet`, `a?.csv`) has the pattern characters escaped, which Hadoop's glob reads as
   * themselves.
   */
  def literal(file: Path): String = file.toString.replaceAll("""([\\*?\[\]{}])""", """\\$1""")

  private def unsupported(what: String): Nothing =
    throw new IllegalArgumentException(s"dsha reads per-file digests of files read by a file data source, not of $what")
}
