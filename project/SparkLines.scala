import java.io.File

import scala.io.Source

/** A row of dev/spark-lines: one jar of dsha, for one Spark line and one Scala version. */
case class SparkLine(line: String, scala: String, scalaFull: String, build: String, java: String, srcdir: String)

object SparkLines {

  def read(table: File): Seq[SparkLine] = {
    val source = Source.fromFile(table, "UTF-8")
    try source.getLines().map(_.trim).filter(l => l.nonEmpty && !l.startsWith("#")).map(_.split("\\s+")).map { f =>
      SparkLine(f(0), f(1), f(2), f(3), f(4), f(5))
    }.toList
    finally source.close()
  }

  /**
   * The line selected by the system properties spark.line (3.5 or 4), spark.version (its line, when spark.line is not
   * given) and scala.binary (default: the line's first row in the table). Without any: Spark 4.x, Scala 2.13.
   */
  def selected(table: File): SparkLine = {
    val all = read(table)
    val line = sys.props
      .get("spark.line")
      .orElse(sys.props.get("spark.version").map(v => if (v.startsWith("3.")) "3.5" else "4"))
      .getOrElse("4")
    val candidates = all.filter(_.line == line)
    val chosen = sys.props.get("scala.binary") match {
      case Some(s) => candidates.find(_.scala == s)
      case None => candidates.headOption
    }
    chosen.getOrElse(
      sys.error(
        s"dsha: no Spark line $line with Scala ${sys.props.getOrElse("scala.binary", "(any)")} in $table; lines: " +
          all.map(l => s"${l.line}/${l.scala}").mkString(", ")
      )
    )
  }
}
