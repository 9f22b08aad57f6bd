package io.dsha.files

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Attribute, BoundReference, JoinedRow, UnsafeProjection}
import org.apache.spark.sql.execution.datasources.{WriteJobStatsTracker, WriteTaskStats, WriteTaskStatsTracker}

import io.dsha.algorithm.Algorithm
import io.dsha.encoding.RowBytesWriter
import io.dsha.types.CanonicalSchema

/**
 * The digest state of every file a write commits, computed from the rows as the writer writes them (the data is read
 * and hashed once). Spark runs a [[FileStatesTracker.TaskTracker]] in every task attempt and hands
 * [[processStats]] the statistics of committed tasks only: a failed, killed, speculative-but-losing or retried
 * attempt contributes nothing, so the states describe exactly the files the job committed.
 *
 * @param schema      the canonical schema of the written columns (the DataFrame's, as `dsha(*)` names them)
 * @param data        the columns a writer's row holds (the written columns without the partition columns)
 * @param partitions  the partition columns (their values come with `newPartition`, not in the row)
 * @param ordinals    for each argument of `schema`, its column in `data ++ partitions`
 */
final class FileStatesTracker(
    schema: CanonicalSchema,
    algorithm: Algorithm,
    data: Seq[Attribute],
    partitions: Seq[Attribute],
    ordinals: IndexedSeq[Int]
) extends WriteJobStatsTracker {
  @transient private var committed: Seq[FileStatesTracker.FileState] = Nil

  override def newTaskInstance(): WriteTaskStatsTracker =
    new FileStatesTracker.TaskTracker(schema, algorithm, data, partitions, ordinals)

  override def processStats(stats: Seq[WriteTaskStats], jobCommitTime: Long): Unit =
    committed = stats.flatMap {
      case s: FileStatesTracker.TaskStates => s.files
      case _ => Nil
    }

  /** After the write: the committed files (path relative to the output directory) and their states. */
  def files: Seq[FileStatesTracker.FileState] = committed
}

object FileStatesTracker {
  final case class FileState(path: String, rows: Long, words: Array[Long])

  final case class TaskStates(files: Seq[FileState]) extends WriteTaskStats

  final class TaskTracker(
      schema: CanonicalSchema,
      algorithm: Algorithm,
      data: Seq[Attribute],
      partitions: Seq[Attribute],
      ordinals: IndexedSeq[Int]
  ) extends WriteTaskStatsTracker {
    private val writer = RowBytesWriter(schema.row, ordinals, algorithm)
    private val hasher = algorithm.newRowHasher(schema.digest)
    private val combiner = algorithm.combiner
    // A partitioned writer's row lacks the partition columns: join the partition values and make one UnsafeRow,
    // which the row-bytes writer reads from its bytes.
    private val joined = new JoinedRow()
    private val toUnsafe: Option[UnsafeProjection] =
      if (partitions.isEmpty) None
      else {
        val all = data ++ partitions
        Some(UnsafeProjection.create(all.zipWithIndex.map { case (a, i) => BoundReference(i, a.dataType, a.nullable) }))
      }
    private var partitionValues: InternalRow = InternalRow.empty
    private val open = mutable.LinkedHashMap.empty[String, Accumulator]
    private var lastPath: String = _
    private var last: Accumulator = _

    private final class Accumulator(val partitionValues: InternalRow) {
      var rows = 0L
      val words = new Array[Long](combiner.words)
    }

    override def newPartition(values: InternalRow): Unit = partitionValues = values.copy()

    // The partition values of each directory written to. Spark announces a partition (newPartition) before its first
    // file only: a later file of that directory (rolled over by maxRecordsPerFile) comes without it, and concurrent
    // writers may have announced other partitions in between. A file's values are its directory's.
    private val valuesByDirectory = mutable.HashMap.empty[String, InternalRow]

    override def newFile(filePath: String): Unit = {
      val directory = filePath.substring(0, math.max(filePath.lastIndexOf('/'), 0))
      open(filePath) = new Accumulator(valuesByDirectory.getOrElseUpdate(directory, partitionValues))
    }

    override def closeFile(filePath: String): Unit = ()

    override def newRow(filePath: String, row: InternalRow): Unit = {
      if (filePath ne lastPath) {
        // Concurrent writers interleave files; a file's partition values are those current when it was opened.
        last = open.getOrElseUpdate(filePath, new Accumulator(partitionValues))
        lastPath = filePath
      }
      val full = toUnsafe match {
        case None => row
        case Some(p) => p(joined(row, last.partitionValues))
      }
      hasher.startRow()
      writer.write(hasher, full)
      hasher.finishRow()
      combiner.add(last.words, 0, hasher)
      last.rows += 1
    }

    override def getFinalStats(taskCommitTime: Long): WriteTaskStats =
      TaskStates(open.toSeq.map { case (path, a) => FileState(relative(path), a.rows, a.words) })

    /** A written file's path below the output directory: its partition directories and its name. */
    private def relative(path: String): String =
      path.split('/').filter(_.nonEmpty).takeRight(partitions.size + 1).mkString("/")
  }

}
