package io.dsha.registration

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{BinaryType, StringType}
import org.apache.spark.unsafe.types.UTF8String

import io.dsha.algorithm.KeyedAlgorithm
import io.dsha.util.Secret

/**
 * The key argument of the keyed functions (SPEC.md §16.2), read once when the query is analysed: a constant BINARY,
 * a STRING in hex or base64, or `conf:NAME` for the session setting NAME, optionally `conf:NAME#ALGORITHM` to name
 * the keyed algorithm with the key (a call's own choice, where the session's setting is shared by every thread). From
 * then on the key lives in the algorithm, outside the plan's expressions. Errors name the function and the setting,
 * never the key.
 *
 * A setting read as a key is removed from the session and kept in the driver's memory under its name: Spark copies
 * session settings into every job's properties, and event logs print those unredacted. A plan analysed again (Spark
 * Connect re-analyses for each action) finds the key by the same name.
 */
object KeyArgument {
  val ConfPrefix = "conf:"

  private val keys = new java.util.concurrent.ConcurrentHashMap[String, Secret]()
  // Keys written in SQL text that are not keys (too short, neither hex nor base64): the error, raised at analysis.
  private val invalid = new java.util.concurrent.ConcurrentHashMap[String, String]()
  private val salt = {
    val b = new Array[Byte](32)
    new java.security.SecureRandom().nextBytes(b)
    b
  }

  private def fromSetting(name: String, what: String): Secret = {
    val conf = SQLConf.get
    Option(conf.getConfString(name, null)) match {
      case Some(value) =>
        val key = Secret.parse(value, s"$what (session setting '$name')")
        keys.put(name, key)
        // The analyser may run on a copy of the session's settings: remove it from both.
        conf.unsetConf(name)
        org.apache.spark.sql.SparkSession.getActiveSession.foreach(_.conf.unset(name))
        key
      case None =>
        Option(keys.get(name)).getOrElse {
          Option(invalid.get(name)).foreach(reason => throw new IllegalArgumentException(reason))
          throw new IllegalArgumentException(s"$what names the session setting '$name', which is not set")
        }
    }
  }

  /** A key given as text outside SQL (the Python API's per-file states): hex, base64 or `conf:NAME`. */
  def fromText(what: String, text: String): Secret =
    if (text.startsWith(ConfPrefix)) fromSetting(Reference(text).setting, what)
    else Secret.parse(text, what)

  /** `conf:NAME` or `conf:NAME#ALGORITHM`: the setting's name and the keyed algorithm's id named with it, if any. */
  private final case class Reference(setting: String, algorithm: Option[String])

  private object Reference {
    def apply(text: String): Reference = {
      val body = text.substring(ConfPrefix.length)
      body.lastIndexOf('#') match {
        case -1 => Reference(body.trim, None)
        case i => Reference(body.substring(0, i).trim, Some(body.substring(i + 1).trim))
      }
    }
  }

  // The keyed algorithm a query that dsha builds asks for with its key (`remember(algorithm)`), by the key's name.
  private val algorithms = new java.util.concurrent.ConcurrentHashMap[String, KeyedAlgorithm]()

  /** Keeps a key in the driver's memory under a new name, for a query that dsha builds (`conf:NAME`). */
  def remember(key: Secret): String = {
    val name = "spark.dsha.secret.internal." + java.util.UUID.randomUUID().toString.replace("-", "")
    keys.put(name, key)
    name
  }

  /** The same for a keyed algorithm with its key: the query's keyed functions take this algorithm, not the setting's. */
  def remember(algorithm: KeyedAlgorithm): String = {
    val name = remember(algorithm.key.getOrElse(throw new IllegalArgumentException(s"${algorithm.id} without a key")))
    algorithms.put(name, algorithm)
    name
  }

  /**
   * The keyed algorithm of a keyed function's call: the one its key reference names (`conf:NAME#ALGORITHM`), else the
   * one remembered with its key, else the session's `spark.dsha.keyed.algorithm` (dsha-keyed-v1 unless set), under the
   * key read by [[read]].
   */
  def readAlgorithm(function: String, key: Expression): KeyedAlgorithm = {
    val secret = read(function, key)
    val chosen = key.eval() match {
      case text: UTF8String if text.toString.startsWith(ConfPrefix) =>
        val reference = Reference(text.toString)
        reference.algorithm
          .map(id => KeyedAlgorithm.byId(id, s"the algorithm named in the key reference of $function").withKey(secret))
          .orElse(Option(algorithms.get(reference.setting)))
      case _ => None
    }
    chosen.getOrElse {
      val id = SQLConf.get.getConfString(KeyedAlgorithm.Setting, io.dsha.algorithm.DshaKeyedV1.Id)
      KeyedAlgorithm.byId(id, s"the session setting '${KeyedAlgorithm.Setting}'").withKey(secret)
    }
  }

  /**
   * A key written as a literal in SQL text (text or bytes), kept under a name derived from it with a random salt of
   * this JVM (the same key, the same name; nothing learnt from the name): the parser puts `conf:NAME` in its place
   * ([[KeyLiterals]]). A literal that is no key is remembered with its error, raised when the query is analysed.
   */
  def rememberLiteral(function: String, literal: Either[String, Array[Byte]]): String = {
    val what = s"the key of $function"
    val mac = javax.crypto.Mac.getInstance("HmacSHA256")
    mac.init(new javax.crypto.spec.SecretKeySpec(salt, "HmacSHA256"))
    val raw = literal.fold(t => ("t" + t).getBytes(java.nio.charset.StandardCharsets.UTF_8), b => "b".getBytes ++ b)
    val name = "spark.dsha.secret.literal." + mac.doFinal(raw).take(16).map(b => f"${b & 0xff}%02x").mkString
    try keys.put(name, literal.fold(Secret.parse(_, what), Secret(_, what)))
    catch { case e: IllegalArgumentException => invalid.put(name, e.getMessage) }
    name
  }

  def read(function: String, key: Expression): Secret = {
    val what = s"the key of $function"
    if (!key.foldable) {
      throw new IllegalArgumentException(
        s"$what must be a constant: BINARY, a hex or base64 STRING, or '${ConfPrefix}NAME' for a session setting"
      )
    }
    (key.dataType, key.eval()) match {
      case (_, null) => throw new IllegalArgumentException(s"$what is NULL")
      case (BinaryType, bytes: Array[Byte]) => Secret(bytes, what)
      case (_: StringType, text: UTF8String) =>
        val s = text.toString
        if (s.startsWith(ConfPrefix)) {
          fromSetting(Reference(s).setting, what)
        } else {
          Secret.parse(s, what)
        }
      case (other, _) =>
        throw new IllegalArgumentException(s"$what must be BINARY or STRING, not ${other.sql}")
    }
  }
}
