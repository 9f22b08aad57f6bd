package io.dsha.execution

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.columnar.CachedBatch
import org.apache.spark.sql.execution.SparkPlan
import org.apache.spark.sql.execution.adaptive.TableCacheQueryStageExec
import org.apache.spark.sql.execution.columnar.{
  ColumnarIterator,
  DefaultCachedBatch,
  DefaultCachedBatchSerializer,
  GenerateColumnAccessor,
  InMemoryTableScanExec
}
import org.apache.spark.sql.execution.metric.SQLMetric
import org.apache.spark.sql.internal.{SQLConf, StaticSQLConf}
import org.apache.spark.sql.types._

import io.dsha.cache.{CachedBatchReader, CachedColumn}
import io.dsha.shims.SparkShims
import io.dsha.util.Settings

/**
 * The rows of a scan of a cached table (`df.cache()`), read by dsha's decoder of the cache's batches
 * ([[io.dsha.cache.CachedBatchReader]]) rather than by Spark's reader: the same rows, byte for byte, at about a third of
 * the cost, which is most of what digesting a cached table costs. For the row-bytes steps (`PartialDshaExec`,
 * `PartialSketchExec`, `DigestFilterExec`) when the table is cached by Spark's default cache serializer and every
 * column read is of a flat type; anything else, and any batch whose encoding the decoder does not know, is read by
 * Spark. Off with `spark.dsha.readCachedBatches=false`.
 *
 * The scan's partition-pruning predicates are not applied: they only skip batches that the filter above the scan
 * (the one that pushed them) would drop anyway, and they are never set under an aggregate reading the scan directly.
 */
final case class CachedRows(scan: InMemoryTableScanExec, columns: Seq[CachedRows.Column]) {

  def execute(): RDD[InternalRow] = {
    val relationOutput = scan.relation.output
    val indexes = scan.output.map(a => relationOutput.indexWhere(_.exprId == a.exprId)).toArray
    val specs = columns
    val numOutputRows = scan.longMetric("numOutputRows")
    scan.baseCacheRDD().mapPartitions(batches => new CachedRows.Rows(batches, specs, indexes, numOutputRows))
  }
}

object CachedRows {
  val Enabled = "spark.dsha.readCachedBatches"

  /** How one column is decoded, and its type as Spark's reader takes it (for batches read by Spark). */
  final case class Column(kind: Int, precision: Int, scale: Int, sparkType: DataType) {
    def decoder: CachedColumn = new CachedColumn(kind, precision, scale)
  }

  /** The scan under `plan` (itself, or the query stage of adaptive execution around it), if dsha reads its batches. */
  def of(plan: SparkPlan): Option[CachedRows] =
    if (!Settings.trueOrFalse(Enabled, plan.conf.getConfString(Enabled, "true")) || !defaultSerializer) None
    else
      scanOf(plan).flatMap { scan =>
        val relationOutput = scan.relation.output.map(_.exprId)
        val columns = scan.output.map(a => if (relationOutput.contains(a.exprId)) column(a.dataType) else None)
        if (columns.forall(_.isDefined)) Some(CachedRows(scan, columns.flatten)) else None
      }

  /** `plan`'s rows: decoded by dsha where [[of]] says so, else `plan.execute()`. */
  def rows(plan: SparkPlan): RDD[InternalRow] = of(plan).fold(plan.execute())(_.execute())

  /** Appended to a step's EXPLAIN line when it reads cached batches itself. */
  def note(plan: SparkPlan): String = if (of(plan).isDefined) ", reads cached batches" else ""

  private def scanOf(plan: SparkPlan): Option[InMemoryTableScanExec] = plan match {
    case scan: InMemoryTableScanExec => Some(scan)
    case stage: TableCacheQueryStageExec => scanOf(stage.plan)
    case _ => None
  }

  private def defaultSerializer: Boolean =
    SQLConf.get.getConf(StaticSQLConf.SPARK_CACHE_SERIALIZER) == classOf[DefaultCachedBatchSerializer].getName

  /** The cache's column layout of a type (Spark's ColumnBuilder): the flat types only. */
  private def column(dt: DataType): Option[Column] = {
    import CachedColumn._
    def as(kind: Int, precision: Int = 0, scale: Int = 0) = Some(Column(kind, precision, scale, dt))
    dt match {
      case udt: UserDefinedType[_] => column(udt.sqlType).map(_.copy(sparkType = udt.sqlType))
      case BooleanType => as(BOOLEAN)
      case ByteType => as(BYTE)
      case ShortType => as(SHORT)
      case IntegerType | DateType | _: YearMonthIntervalType => as(INT)
      case LongType | TimestampType | TimestampNTZType | _: DayTimeIntervalType => as(LONG)
      case t if SparkShims.isTime(t) => as(LONG)
      case FloatType => as(FLOAT)
      case DoubleType => as(DOUBLE)
      case _: StringType => as(STRING)
      case BinaryType => as(BINARY)
      case d: DecimalType if d.precision <= Decimal.MAX_LONG_DIGITS => as(LONG)
      case d: DecimalType => as(WIDE_DECIMAL, d.precision, d.scale)
      case _ => None
    }
  }

  /**
   * The most values (rows times columns) of a batch that dsha decodes at once: a batch is decoded whole, 16 bytes per
   * value at most, so this bounds a task's memory at 32 MiB. Spark's default batches of 10,000 rows stay within it up
   * to 200 columns; batches of wider tables are read by Spark's reader.
   */
  val MaxValuesPerBatch: Long = 1L << 21

  /**
   * One partition's rows: each batch decoded by dsha, or by Spark's reader when dsha's does not know its encoding or
   * the batch has more than `maxValues` values.
   */
  private[dsha] class Rows(
      batches: Iterator[CachedBatch],
      columns: Seq[Column],
      indexes: Array[Int],
      numOutputRows: SQLMetric,
      maxValues: Long = MaxValuesPerBatch
  ) extends Iterator[InternalRow] {
    private val reader = new CachedBatchReader(columns.map(_.decoder).toArray, indexes)
    private val sparkTypes = columns.map(_.sparkType)
    private var spark: Iterator[InternalRow] = Iterator.empty

    /** How many batches dsha's reader decoded (the rest, Spark's). */
    var decoded = 0

    override def hasNext: Boolean = reader.hasNext || spark.hasNext || advance()

    override def next(): InternalRow = {
      if (!hasNext) throw new NoSuchElementException("no more cached rows")
      if (reader.hasNext) reader.next() else spark.next()
    }

    private def advance(): Boolean = {
      while (batches.hasNext) {
        val batch = batches.next() match {
          case b: DefaultCachedBatch => b
          case other =>
            throw new IllegalStateException(
              s"dsha: a cached batch of ${other.getClass.getName}, not Spark's default; set $Enabled=false"
            )
        }
        numOutputRows += batch.numRows
        if (batch.numRows.toLong * columns.size <= maxValues && decode(batch)) decoded += 1
        else spark = readBySpark(batch)
        if (reader.hasNext || spark.hasNext) return true
      }
      false
    }

    /** Whether dsha's reader decoded the batch (if not, Spark's reads it; a decoding error is Spark's to report). */
    protected def decode(batch: DefaultCachedBatch): Boolean =
      try reader.load(batch.buffers, batch.numRows)
      catch { case _: RuntimeException => false }

    private def readBySpark(batch: DefaultCachedBatch): Iterator[InternalRow] = {
      val rows: ColumnarIterator = GenerateColumnAccessor.generate(sparkTypes)
      rows.initialize(Iterator.single(batch), sparkTypes.toArray, indexes)
      rows
    }
  }
}
