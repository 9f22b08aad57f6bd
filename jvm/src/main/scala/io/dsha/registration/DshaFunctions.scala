package io.dsha.registration

import scala.reflect.ClassTag

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.FunctionRegistryBase
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}

import io.dsha.aggregate._
import io.dsha.algorithm.KeyedAlgorithm
import io.dsha.execution.HashRowBytes
import io.dsha.expressions.{DshaSketchDiff, LogicalFilterWordIn, LogicalHash, LogicalHashIn, NamedArguments}
import io.dsha.shims.SparkShims
import io.dsha.sketch.Sketch
import io.dsha.util.Settings

/**
 * The SQL functions dsha adds, in the shape SparkSessionExtensions.injectFunction takes. Each builder captures the
 * arguments' names while the analyzer still has them (they become nameless BoundReferences after binding).
 */
object DshaFunctions {
  type Builder = Seq[Expression] => Expression
  type Description = (FunctionIdentifier, ExpressionInfo, Builder)

  private def describe[T: ClassTag](name: String)(build: Builder): Description =
    (FunctionIdentifier(name), FunctionRegistryBase.expressionInfo[T](name, None), build)

  val all: Seq[Description] = Seq(
    describe[LogicalHash]("logical_hash")(args => LogicalHash(args, NamedArguments.of(args))),
    describe[Dsha]("dsha")(args => Dsha(args, NamedArguments.of(args))),
    describe[DshaFingerprint]("dsha_fingerprint")(args => DshaFingerprint(args, NamedArguments.of(args))),
    describe[DshaState]("dsha_state")(args => DshaState(args, NamedArguments.of(args))),
    describe[DshaMerge]("dsha_merge")(args => DshaMerge(oneState("dsha_merge", args))),
    describe[DshaFinal]("dsha_final")(args => DshaFinal(oneState("dsha_final", args))),
    describe[DshaFinalFingerprint]("dsha_final_fingerprint")(args =>
      DshaFinalFingerprint(oneState("dsha_final_fingerprint", args))
    ),
    describe[DshaKeyed]("dsha_keyed")(keyed("dsha_keyed", DshaKeyed)),
    describe[DshaKeyedFingerprint]("dsha_keyed_fingerprint")(keyed("dsha_keyed_fingerprint", DshaKeyedFingerprint)),
    describe[DshaKeyedState]("dsha_keyed_state")(keyed("dsha_keyed_state", DshaKeyedState)),
    describe[DshaSecure]("dsha_secure")(args => DshaSecure(args, NamedArguments.of(args))),
    describe[DshaSecureFingerprint]("dsha_secure_fingerprint")(args =>
      DshaSecureFingerprint(args, NamedArguments.of(args))
    ),
    describe[DshaSecureState]("dsha_secure_state")(args => DshaSecureState(args, NamedArguments.of(args))),
    describe[DshaSecureV2]("dsha_secure_v2")(args => DshaSecureV2(args, NamedArguments.of(args))),
    describe[DshaSecureV2Fingerprint]("dsha_secure_v2_fingerprint")(args =>
      DshaSecureV2Fingerprint(args, NamedArguments.of(args))
    ),
    describe[DshaSecureV2State]("dsha_secure_v2_state")(args => DshaSecureV2State(args, NamedArguments.of(args))),
    describe[DshaSketch]("dsha_sketch")(args =>
      DshaSketch(args, NamedArguments.of(args), sketchCells(), sketchColumns(), sketchRowBytes())
    ),
    describe[DshaSketchDiff]("dsha_sketch_diff") {
      case Seq(l, r) => DshaSketchDiff(l, r)
      case args =>
        throw new IllegalArgumentException(s"dsha_sketch_diff takes two sketches, not ${args.size} arguments")
    },
    describe[DshaSketchMerge]("dsha_sketch_merge") {
      case Seq(sketch) => DshaSketchMerge(sketch)
      case args =>
        throw new IllegalArgumentException(s"dsha_sketch_merge takes one argument, a dsha sketch, not ${args.size}")
    },
    describe[LogicalHashIn]("logical_hash_in")(LogicalHashIn.build),
    describe[LogicalFilterWordIn]("logical_filter_word_in")(LogicalFilterWordIn.build)
  )

  /** spark.dsha.sketch.columnDigests of the session analysing the query: whether a sketch has column digests. */
  private def sketchColumns(): Boolean = booleanSetting(Sketch.ColumnsSetting)

  /** spark.dsha.hashRowBytes of the session analysing the query: whether a sketch may hash rows from their bytes. */
  private def sketchRowBytes(): Boolean = booleanSetting(HashRowBytes.Enabled)

  private def booleanSetting(name: String): Boolean =
    Settings.trueOrFalse(name, org.apache.spark.sql.internal.SQLConf.get.getConfString(name, "true"))

  /** spark.dsha.sketch.cells of the session analysing the query (the cells of a new sketch). */
  private def sketchCells(): Int = {
    val conf = org.apache.spark.sql.internal.SQLConf.get
    val text = conf.getConfString(Sketch.CellsSetting, Sketch.DefaultCells.toString)
    val cells =
      try text.trim.toLong
      catch {
        case _: NumberFormatException =>
          throw new IllegalArgumentException(s"${Sketch.CellsSetting} must be a whole number of cells, not '$text'")
      }
    Sketch.checkCells(cells, Sketch.CellsSetting)
  }

  /** A keyed function: the key first (read now, kept out of the plan), then the columns. */
  private def keyed(name: String, make: (Seq[Expression], Seq[String], KeyedAlgorithm) => Expression): Builder = {
    case key +: columns => make(columns, NamedArguments.of(columns), KeyArgument.readAlgorithm(name, key))
    case _ => throw new IllegalArgumentException(s"$name takes a key, then the columns to hash")
  }

  private def oneState(name: String, args: Seq[Expression]): Expression = args match {
    case Seq(state) => state
    case _ => throw new IllegalArgumentException(s"$name takes one argument, a dsha state, not ${args.size}")
  }

  val names: Seq[String] = all.map(_._1.funcName)

  /** The functions whose first argument is a key (kept out of parsed plans by [[KeyLiterals]]). */
  val keyedNames: Set[String] = Set("dsha_keyed", "dsha_keyed_fingerprint", "dsha_keyed_state")

  /**
   * Registers the functions in one running session (`newSession()` and Spark Connect sessions need the extension).
   * Without the extension the session also lacks [[ArgumentNamesAsInInput]]: a column argument is then named as the
   * query spells it (`dsha(A)` over a column `a` hashes a column `A`).
   */
  def register(spark: SparkSession): Unit = {
    val registry = SparkShims.functionRegistry(spark)
    all.foreach { case (id, info, builder) =>
      registry.registerFunction(SparkShims.functionIdentifier(id.funcName), info, builder)
    }
  }

  def isRegistered(spark: SparkSession): Boolean =
    names.forall(n => SparkShims.functionRegistry(spark).functionExists(SparkShims.functionIdentifier(n)))
}
