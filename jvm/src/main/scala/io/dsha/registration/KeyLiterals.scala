package io.dsha.registration

import java.lang.reflect.{InvocationHandler, InvocationTargetException, Method, Proxy}
import java.util.Locale

import org.apache.spark.sql.catalyst.analysis.UnresolvedFunction
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal}
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.types.{BinaryType, StringType}
import org.apache.spark.unsafe.types.UTF8String

/**
 * Keeps keys written as literals in SQL text (`dsha_keyed('9f86…', *)`) out of parsed plans: the parser's output
 * has each such literal replaced by `'conf:NAME'`, a name under which [[KeyArgument]] keeps the key in the driver's
 * memory. So EXPLAIN EXTENDED, event logs' plan descriptions and Spark Connect's plan events show the name, never the
 * key, also for the statements of a SQL script (`BEGIN ... END`, Spark 4). The SQL text itself is the caller's:
 * Spark shows it where it shows statements (a job description set to it, a view's original text), which is why
 * README recommends `conf:NAME` or Python's `key=`.
 *
 * The wrapper is a dynamic proxy of [[ParserInterface]], so one jar fits every Spark line whatever methods a line's
 * parser has: each call goes to the wrapped parser, and plans and expressions it returns are rewritten.
 */
object KeyLiterals {

  def parser(delegate: ParserInterface): ParserInterface =
    Proxy
      .newProxyInstance(getClass.getClassLoader, Array(classOf[ParserInterface]), new Rewriting(delegate))
      .asInstanceOf[ParserInterface]

  private final class Rewriting(delegate: ParserInterface) extends InvocationHandler {
    override def invoke(proxy: Any, method: Method, args: Array[AnyRef]): AnyRef = {
      val result =
        try method.invoke(delegate, (if (args == null) Array.empty[AnyRef] else args): _*)
        catch { case e: InvocationTargetException => throw e.getCause }
      result match {
        case plan: LogicalPlan => rewrite(plan)
        case e: Expression => e.transformUp(replace)
        case other => other
      }
    }
  }

  def rewrite(plan: LogicalPlan): LogicalPlan =
    plan.transformUpWithSubqueries { case p => heldPlans(p.transformExpressionsUp(replace)) }

  /**
   * A node that holds a plan as an argument without it being a child, as a SQL script's statement does on Spark 4:
   * that plan is rewritten whole (its expressions and their subqueries are not the node's, so the traversal above
   * does not reach them).
   */
  private def heldPlans(node: LogicalPlan): LogicalPlan = {
    var changed = false
    val args = node.productIterator.map {
      case held: LogicalPlan if !node.children.exists(_ eq held) =>
        val rewritten = rewrite(held)
        changed ||= !(rewritten eq held)
        rewritten
      case other => other.asInstanceOf[AnyRef]
    }.toArray
    if (changed) node.makeCopy(args) else node
  }

  private val replace: PartialFunction[Expression, Expression] = {
    case f: UnresolvedFunction if keyed(f) =>
      f.arguments.head match {
        case l: Literal if l.value != null && (l.dataType == BinaryType || l.dataType.isInstanceOf[StringType]) =>
          val name = l.value match {
            case text: UTF8String if text.toString.startsWith(KeyArgument.ConfPrefix) => None
            case text: UTF8String => Some(KeyArgument.rememberLiteral(f.nameParts.last, Left(text.toString)))
            case bytes: Array[Byte] => Some(KeyArgument.rememberLiteral(f.nameParts.last, Right(bytes)))
            case _ => None
          }
          name.fold[Expression](f) { n =>
            f.withNewChildren(Literal(KeyArgument.ConfPrefix + n) +: f.children.tail)
          }
        case _ => f
      }
  }

  private def keyed(f: UnresolvedFunction): Boolean =
    f.arguments.nonEmpty && DshaFunctions.keyedNames.contains(f.nameParts.last.toLowerCase(Locale.ROOT))
}
