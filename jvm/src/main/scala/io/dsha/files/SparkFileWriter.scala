package io.dsha.files

import org.apache.hadoop.conf.Configuration
import org.apache.spark.internal.io.FileCommitProtocol
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.datasources.{FileFormat, FileFormatWriter, WriteJobStatsTracker}

/**
 * Calls Spark's `FileFormatWriter.write`, whose parameter list grows between releases (4.1 added a twelfth): the
 * first ten are the same on every line dsha supports, the rest take their defaults. Reflection keeps one jar working
 * on 4.0-4.3.
 */
private[files] object SparkFileWriter {
  private val module: AnyRef = FileFormatWriter
  private lazy val method =
    module.getClass.getMethods.filter(_.getName == "write").sortBy(_.getParameterCount).lastOption.getOrElse(
      throw new IllegalStateException("this Spark has no FileFormatWriter.write")
    )

  /** Writes the plan's rows and commits them (or aborts the job and throws). */
  def write(
      session: AnyRef,
      plan: SparkPlan,
      format: FileFormat,
      committer: FileCommitProtocol,
      outputSpec: FileFormatWriter.OutputSpec,
      hadoopConf: Configuration,
      partitionColumns: List[Attribute],
      trackers: List[WriteJobStatsTracker],
      options: Map[String, String]
  ): Unit = {
    val fixed: Array[AnyRef] =
      Array(session, plan, format, committer, outputSpec, hadoopConf, partitionColumns, None, trackers, options)
    val defaults = (fixed.length + 1 to method.getParameterCount).map { i =>
      module.getClass.getMethod(s"write$$default$$$i").invoke(module)
    }
    try method.invoke(module, fixed ++ defaults: _*)
    catch { case e: java.lang.reflect.InvocationTargetException if e.getCause != null => throw e.getCause }
  }
}
