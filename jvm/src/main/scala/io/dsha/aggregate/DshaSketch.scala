package io.dsha.aggregate

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.analysis.TypeCheckResult
import org.apache.spark.sql.catalyst.expressions.{
  BoundReference,
  Expression,
  ExpressionDescription,
  UnsafeProjection,
  UnsafeRow
}
import org.apache.spark.sql.catalyst.expressions.aggregate.TypedImperativeAggregate
import org.apache.spark.sql.types.{BinaryType, DataType}

import io.dsha.algorithm.DshaV1
import io.dsha.encoding.RowBytesWriter
import io.dsha.expressions.{NamedArguments, RowDigest, RowDigestWord, RowFilterWord}
import io.dsha.sketch.{Sketch, SketchRowBytes}
import io.dsha.types.CanonicalSchema

// scalastyle:off line.size.limit
@ExpressionDescription(
  usage = """
    _FUNC_(expr1, expr2, ...) - Returns the dsha sketch of the rows (BINARY, SPEC.md §17): their dsha-v1 row digests
      in the cells of an invertible Bloom lookup table, with the row count and the canonical schema. The difference of
      two tables' sketches decodes (dsha_sketch_diff) into the row digests in excess on each side, with their
      multiplicities, when it has about 1.23 cells or more per differing digest. The number of cells is the setting
      spark.dsha.sketch.cells (2^i or 3*2^i; default 49152, 48 bytes each), read when the query is analysed. With
      spark.dsha.sketch.columnDigests (default true) the sketch also holds each column's dsha digest (what
      dsha(column) gives), which costs about one more hash per value.
  """,
  arguments = """
    Arguments:
      * expr1, expr2, ... - columns or expressions, identified by name; `*` sketches every column.
  """,
  examples = """
    Examples:
      > SELECT dsha_sketch_diff(a.s, b.s).entries[0].count FROM (SELECT _FUNC_(*) AS s FROM VALUES (1), (2), (2) AS t(x)) a, (SELECT _FUNC_(*) AS s FROM VALUES (1) AS t(x)) b;
       2
  """,
  group = "agg_funcs",
  since = "0.2.0"
)
// scalastyle:on line.size.limit
case class DshaSketch(
    children: Seq[Expression],
    fieldNames: Seq[String],
    cells: Int,
    withColumns: Boolean,
    hashRowBytes: Boolean = true,
    mutableAggBufferOffset: Int = 0,
    inputAggBufferOffset: Int = 0
) extends TypedImperativeAggregate[Sketch]
    with NamedArguments {

  override def prettyName: String = "dsha_sketch"
  override def nullable: Boolean = false
  override def dataType: DataType = BinaryType
  override def withFieldNames(names: Seq[String]): DshaSketch = copy(fieldNames = names)

  @transient private lazy val rowDigest = RowDigest(children, fieldNames, DshaV1)
  def schema: CanonicalSchema = rowDigest.schema

  override def checkInputDataTypes(): TypeCheckResult = rowDigest.checkInputDataTypes() match {
    case TypeCheckResult.TypeCheckFailure(message) =>
      TypeCheckResult.TypeCheckFailure(message.replaceFirst("^row_digest", prettyName))
    case ok => ok
  }

  /** Each column alone, in canonical order: its digest makes `dsha(column)` (SPEC.md §17.1). */
  @transient private lazy val columnDigests: IndexedSeq[RowDigest] =
    if (!withColumns) IndexedSeq.empty
    else schema.fields.map(f => RowDigest(Seq(children(f.ordinal)), Seq(f.name), DshaV1))

  // The row digest's words, the row's filter word, then each column's digest words, by a projection made once per
  // task: generated or interpreted code as the codegen factory mode says, with subexpression elimination (one hash per
  // digest). Children are bound by then.
  @transient private lazy val digestWords: UnsafeProjection = {
    def words(d: RowDigest) = Seq(RowDigestWord(d, 0), RowDigestWord(d, 1))
    UnsafeProjection.create(
      words(rowDigest) ++ Seq(RowFilterWord(children, schema.row)) ++ columnDigests.flatMap(words)
    )
  }

  override def createAggregationBuffer(): Sketch =
    Sketch.empty(
      schema.text,
      schema.digest,
      cells,
      columnDigests.map(d => Sketch.Column(d.fieldNames.head, d.schema.digest))
    )

  /**
   * Adds rows read straight from their bytes, when every argument is a plain column of a flat type (the same digests;
   * off with spark.dsha.hashRowBytes=false). `ordinals`: per argument, the input column holding it.
   */
  def rowBytes(ordinals: IndexedSeq[Int]): Option[SketchRowBytes] =
    if (!readsRowBytes) None
    else {
      val perColumn = schema.fields.map(f => IndexedSeq(ordinals(f.ordinal)))
      Some(new SketchRowBytes((rowDigest +: columnDigests).map(_.schema), ordinals +: perColumn, schema.row))
    }

  def readsRowBytes: Boolean = hashRowBytes && RowBytesWriter.direct(schema.row)

  // In an aggregate Spark runs (ObjectHashAggregateExec, children bound by then): the row-bytes path for UnsafeRows.
  @transient private lazy val boundRowBytes: Option[SketchRowBytes] = {
    val ordinals = children.collect { case b: BoundReference => b.ordinal }.toIndexedSeq
    if (ordinals.size == children.size) rowBytes(ordinals) else None
  }

  override def update(buffer: Sketch, input: InternalRow): Sketch = {
    boundRowBytes match {
      case Some(bytes) if input.isInstanceOf[UnsafeRow] => bytes.add(buffer, input)
      case _ => buffer.add(digestWords(input))
    }
    buffer
  }

  override def merge(buffer: Sketch, other: Sketch): Sketch = buffer.merge(other)

  override def eval(buffer: Sketch): Any = buffer.toBytes

  override def serialize(buffer: Sketch): Array[Byte] = buffer.toBytes

  override def deserialize(bytes: Array[Byte]): Sketch = Sketch.parse(bytes)

  override def withNewMutableAggBufferOffset(offset: Int): DshaSketch = copy(mutableAggBufferOffset = offset)
  override def withNewInputAggBufferOffset(offset: Int): DshaSketch = copy(inputAggBufferOffset = offset)
  override protected def withNewChildrenInternal(newChildren: IndexedSeq[Expression]): DshaSketch =
    copy(children = newChildren)
}
