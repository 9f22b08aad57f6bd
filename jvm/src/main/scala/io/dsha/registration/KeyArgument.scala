package io.dsha.registration

import java.util.concurrent.ConcurrentHashMap

import org.apache.spark.sql.SparkSession
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
 * Keys are kept in the driver's memory per Spark session (the classic session, or a Spark Connect client's
 * session), under a name: a setting read as a key is removed from the session at once (Spark copies session settings
 * into every job's properties, and event logs print those unredacted) and kept under its own name; keys handed over
 * by dsha itself (Python's `key=`, literals in SQL text) get names no one can guess. Another session of the same
 * JVM that names a key it did not give is refused: a name seen in a plan or an error is no key. A plan analysed again
 * (Spark Connect re-analyses for each action) finds the key by the same name.
 */
object KeyArgument {
  val ConfPrefix = "conf:"
  val SettingPrefix = "spark.dsha.secret."

  /** One session's keys by name; names whose key was refused, with the error (raised when a query names them). */
  private final class Held {
    val keys = new ConcurrentHashMap[String, Secret]()
    val invalid = new ConcurrentHashMap[String, String]()
    // The keyed algorithm a query that dsha builds asks for with its key (`remember(session, algorithm)`).
    val algorithms = new ConcurrentHashMap[String, KeyedAlgorithm]()
  }

  // Weak keys: a session's keys go when the session does.
  private val sessions = java.util.Collections.synchronizedMap(new java.util.WeakHashMap[AnyRef, Held]())

  private def held(session: AnyRef): Held =
    sessions.synchronized {
      Option(sessions.get(session)).getOrElse { val h = new Held; sessions.put(session, h); h }
    }

  private def active(what: String): SparkSession =
    SparkSession.getActiveSession.getOrElse(
      throw new IllegalStateException(s"$what: no active Spark session, whose keys it could name")
    )

  private val random = new java.security.SecureRandom()

  private def newName(kind: String): String = {
    val b = new Array[Byte](16)
    random.nextBytes(b)
    SettingPrefix + kind + "." + b.map(x => f"${x & 0xff}%02x").mkString
  }

  /** A setting's value as SQL's `SET NAME = 'VALUE'` leaves it (quotes kept), without the quotes. */
  private def unquoted(value: String): String = {
    val t = value.trim
    if (t.length >= 2 && (t.head == '\'' || t.head == '"') && t.last == t.head) t.substring(1, t.length - 1) else t
  }

  /** Keeps `key` as the key `name` of `session`; one that is no key is kept as its error, and raised. */
  private def keep(session: AnyRef, name: String, key: => Secret): Unit = {
    val h = held(session)
    try {
      h.keys.put(name, key)
      h.invalid.remove(name)
    } catch {
      case e: IllegalArgumentException =>
        h.keys.remove(name)
        h.invalid.put(name, e.getMessage)
        throw e
    }
  }

  private def fromSetting(session: SparkSession, name: String, what: String): Secret = {
    val conf = SQLConf.get
    Option(conf.getConfString(name, null)).orElse(session.conf.getOption(name)) match {
      case Some(value) =>
        // Out of the session first, whatever the value holds: the analyser may run on a copy of the settings.
        conf.unsetConf(name)
        session.conf.unset(name)
        keep(session, name, Secret.parse(unquoted(value), s"$what (session setting '$name')"))
        held(session).keys.get(name)
      case None =>
        val h = held(session)
        Option(h.keys.get(name)).getOrElse {
          Option(h.invalid.get(name)).foreach(reason => throw new IllegalArgumentException(reason))
          throw new IllegalArgumentException(
            s"$what names the session setting '$name', which is not set in this session (keys are kept per Spark " +
              "session: a key given in one session cannot be named from another)"
          )
        }
    }
  }

  /** A key given as text outside SQL (the Python API's per-file states): hex, base64 or `conf:NAME`. */
  def fromText(session: SparkSession, what: String, text: String): Secret =
    if (text.startsWith(ConfPrefix)) fromSetting(session, Reference(text).setting, what)
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

  /**
   * Keeps a key (hex or base64 text) for `session` under a new name no one can guess, and returns the name: the
   * Python API hands its `key=` over this way (Py4J), so the key is never a session setting.
   */
  def rememberText(session: SparkSession, text: String): String = {
    val name = newName("handle")
    keep(session, name, Secret.parse(text, "the key"))
    name
  }

  /** The same for a keyed algorithm with its key: the query's keyed functions take this algorithm, not the setting's. */
  def remember(session: SparkSession, algorithm: KeyedAlgorithm): String = {
    val key = algorithm.key.getOrElse(throw new IllegalArgumentException(s"${algorithm.id} without a key"))
    val name = newName("handle")
    val h = held(session)
    h.keys.put(name, key)
    h.algorithms.put(name, algorithm)
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
          .orElse(Option(held(active(function)).algorithms.get(reference.setting)))
      case _ => None
    }
    chosen.getOrElse {
      val id = SQLConf.get.getConfString(KeyedAlgorithm.Setting, io.dsha.algorithm.DshaKeyedV1.Id)
      KeyedAlgorithm.byId(id, s"the session setting '${KeyedAlgorithm.Setting}'").withKey(secret)
    }
  }

  private val salt = {
    val b = new Array[Byte](32)
    random.nextBytes(b)
    b
  }

  /**
   * A key written as a literal in SQL text (text or bytes) parsed by `session`, kept under a name derived from it
   * with a random salt of this JVM (the same key, the same name; nothing learnt from the name): the parser puts
   * `conf:NAME` in its place ([[KeyLiterals]]). A literal that is no key is remembered with its error, raised when
   * the query is analysed.
   */
  def rememberLiteral(session: AnyRef, function: String, literal: Either[String, Array[Byte]]): String = {
    val mac = javax.crypto.Mac.getInstance("HmacSHA256")
    mac.init(new javax.crypto.spec.SecretKeySpec(salt, "HmacSHA256"))
    val raw = literal.fold(t => ("t" + t).getBytes(java.nio.charset.StandardCharsets.UTF_8), b => "b".getBytes ++ b)
    val name = SettingPrefix + "literal." + mac.doFinal(raw).take(16).map(b => f"${b & 0xff}%02x").mkString
    val what = s"the key of $function"
    try keep(session, name, literal.fold(Secret.parse(_, what), Secret(_, what)))
    catch { case _: IllegalArgumentException => () } // kept as its error, raised at analysis
    name
  }

  /** `SET spark.dsha.secret.NAME = 'KEY'` parsed by `session` ([[KeyLiterals]]): the key kept, never a setting. */
  def fromStatement(session: AnyRef, name: String, value: String): Unit =
    keep(session, name, Secret.parse(unquoted(value), s"the key of the statement SET $name"))

  /** A name that stands for a key argument refused as it was parsed: `reason` is raised when the query is analysed. */
  def refused(session: AnyRef, reason: String): String = {
    val name = newName("refused")
    held(session).invalid.put(name, reason)
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
        if (s.startsWith(ConfPrefix)) fromSetting(active(function), Reference(s).setting, what)
        else Secret.parse(s, what)
      case (other, _) =>
        throw new IllegalArgumentException(s"$what must be BINARY or STRING, not ${other.sql}")
    }
  }
}
