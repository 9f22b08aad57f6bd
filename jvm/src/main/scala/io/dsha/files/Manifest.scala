package io.dsha.files

import java.nio.charset.StandardCharsets.UTF_8

import scala.util.control.NonFatal

import com.fasterxml.jackson.core.{JsonFactoryBuilder, StreamReadFeature}
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.hadoop.fs.{ChecksumFileSystem, FileSystem, Path}

import io.dsha.aggregate.DigestState
import io.dsha.aggregate.DigestState.Portable
import io.dsha.algorithm.{Algorithm, KeyedAlgorithm}
import io.dsha.output.DigestFormat
import io.dsha.util.Bytes

/**
 * The digest states of a directory's files (SPEC.md §12): written by `dsha.write` beside the data
 * (`_dsha/manifest.json`, hidden from Spark's readers by its leading underscore), or by a re-digest to a cache file.
 * A file's state is reused only while its path, size and modification time match; the manifest as a whole is
 * ignored when its checksum, algorithm, format or schema disagree, or, for a keyed algorithm, when its MAC does not
 * verify under the reader's key. dsha-secure-v1 states are never read back: they are public (§12.3).
 *
 * @param root   the directory the files' relative paths start from (qualified), as written
 * @param format the Spark data source the files are read with (`parquet`, `orc`, ...)
 */
final case class Manifest(
    algorithm: Algorithm,
    format: String,
    root: String,
    schemaText: String,
    schemaDigest: Array[Byte],
    files: IndexedSeq[Manifest.Entry],
    keyId: Option[String] = None,
    mac: Option[String] = None
) {

  /** The state of all the files: the table's digest when they are all of its files. */
  def state: Portable =
    files.foldLeft(Portable(algorithm, schemaText, schemaDigest, DigestState.zero(algorithm)))((s, e) =>
      s.merge(Portable(algorithm, schemaText, schemaDigest, e.state))
    )

  def toJson: String = {
    val total = state
    val node = Manifest.mapper.createObjectNode()
    node.put("dsha", Manifest.Kind)
    node.put("version", Manifest.Version)
    node.put("algorithm", algorithm.id)
    node.put("format", format)
    node.put("root", root)
    node.put("schema", schemaText)
    node.put("schema_digest", Bytes.hex(schemaDigest))
    keyId.foreach(node.put("key_id", _))
    node.put("rows", total.rows)
    node.put("digest", DigestFormat.digestString(algorithm, schemaDigest, total.rows, total.words).toString)
    val array = node.putArray("files")
    files.foreach { e =>
      val f = array.addObject()
      f.put("path", e.path)
      f.put("size", e.size)
      f.put("modified", e.modified)
      f.put("rows", e.rows)
      f.put("sum", Manifest.wordsHex(e.words))
    }
    node.put("checksum", Bytes.hex(Manifest.checksum(this)))
    Manifest.macUnder(this, algorithm).foreach(node.put("mac", _)) // keyed manifests only, under the writer's key
    Manifest.mapper.writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n"
  }
}

object Manifest {

  /** Paths in UTF-8 byte order (SPEC.md §12.1, §13), as canonical names are ordered; Java's String order (UTF-16
    * code units) differs for characters beyond U+FFFF.
    */
  val PathOrder: Ordering[String] = new Ordering[String] {
    def compare(a: String, b: String): Int = io.dsha.types.CanonicalSchema.compareUtf8(a, b)
  }

  val Kind = "manifest"
  val Version = 1
  val DirName = "_dsha"
  val FileName = "manifest.json"

  /** One file: its path relative to the root ('/'-separated, as Hadoop paths), size, modification time, state. */
  final case class Entry(path: String, size: Long, modified: Long, rows: Long, words: Array[Long]) {
    def state: DigestState = new DigestState(rows, words)
    def matches(size: Long, modified: Long): Boolean = this.size == size && this.modified == modified
  }

  /** The `key_id` a manifest of states of this algorithm carries: the keyed algorithm's, else none. */
  def keyIdOf(algorithm: Algorithm): Option[String] = algorithm match {
    case k: KeyedAlgorithm => k.keyId
    case _ => None
  }

  /**
   * Why a manifest's states are not states of this algorithm (and key), if they are not: another algorithm, another
   * key, or, for a keyed algorithm, a MAC that is missing or does not verify under the key (SPEC.md §12.3).
   */
  def algorithmMismatch(m: Manifest, algorithm: Algorithm): Option[String] =
    if (m.algorithm.id != algorithm.id) Some(s"it is for algorithm ${m.algorithm.id}, not ${algorithm.id}")
    else if (m.keyId != keyIdOf(algorithm)) Some("its states were made with another key")
    else unauthenticated(m, algorithm)

  private def unauthenticated(m: Manifest, algorithm: Algorithm): Option[String] =
    (macUnder(m, algorithm), m.mac) match {
      case (None, _) => None
      case (Some(_), None) =>
        Some("it is keyed but carries no MAC (written by an older dsha, or by someone without the key)")
      case (Some(expected), Some(found))
          if !java.security.MessageDigest.isEqual(
            expected.getBytes(UTF_8),
            found.getBytes(UTF_8)
          ) =>
        Some("its MAC does not verify under this key (edited, or written without the key)")
      case _ => None
    }

  /** Whether a reader takes states of this algorithm from a manifest at all (SPEC.md §12.3, `statesTrusted`). */
  def statesUsable(algorithm: Algorithm): Boolean = algorithm.statesTrusted

  /** Where `dsha.write` keeps the manifest of the directory `root`. */
  def beside(root: Path): Path = new Path(new Path(root, DirName), FileName)

  // A member named twice is refused (not valid JSON, SPEC.md §12.3), not read as its last value: readers of one
  // manifest must not see different members.
  private val mapper = new ObjectMapper(
    new JsonFactoryBuilder().enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION).build()
  )

  /** The combiner words as in a state (SPEC.md §11.1): 8 bytes each, little-endian, in hex. */
  def wordsHex(words: Array[Long]): String =
    Bytes.hex(words.flatMap(w => (0 until 8).map(i => (w >>> (8 * i)).toByte)))

  /** SHA-256 over every field (SPEC.md §12.2), each as u32 little-endian length + UTF-8 bytes of its text. */
  def checksum(m: Manifest): Array[Byte] = Bytes.sha256(fields(m))

  /** The MAC of a keyed manifest under the algorithm's key (SPEC.md §12.2), in hex; None for the other algorithms. */
  def macUnder(m: Manifest, algorithm: Algorithm): Option[String] = algorithm match {
    case k: KeyedAlgorithm => k.manifestMac(fields(m)).map(Bytes.hex)
    case _ => None
  }

  /** The bytes the checksum and the MAC cover (SPEC.md §12.2). */
  private def fields(m: Manifest): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream()
    def field(v: Any): Unit = {
      val b = v.toString.getBytes(UTF_8)
      Bytes.writeIntLE(out, b.length)
      out.write(b)
    }
    Seq(Kind, Version, m.algorithm.id, m.format, m.root, m.schemaText, Bytes.hex(m.schemaDigest)).foreach(field)
    m.keyId.foreach(field) // keyed manifests only: every other manifest's checksum is as before
    field(m.files.size)
    m.files.foreach(e => Seq(e.path, e.size, e.modified, e.rows, wordsHex(e.words)).foreach(field))
    out.toByteArray
  }

  /** A manifest from its JSON text, or why it cannot be trusted. */
  def parse(text: String): Either[String, Manifest] =
    try {
      val node = mapper.readTree(text)
      if (node == null || !node.isObject) Left("not a JSON object")
      else fromNode(node)
    } catch {
      case NonFatal(e) => Left(s"not valid JSON (${e.getMessage.linesIterator.next()})")
    }

  private def fromNode(node: JsonNode): Either[String, Manifest] = {
    def text(name: String): String = {
      val v = node.get(name)
      if (v == null || !v.isTextual) throw new BadField(s"field '$name' is missing or not a string")
      v.asText
    }
    def long(n: JsonNode, name: String): Long = {
      val v = n.get(name)
      if (v == null || !v.canConvertToLong || !v.isIntegralNumber) {
        throw new BadField(s"field '$name' is missing or not an integer")
      }
      v.asLong
    }
    try {
      if (text("dsha") != Kind) return Left(s"not a dsha manifest (field 'dsha' is not '$Kind')")
      if (long(node, "version") != Version) {
        return Left(s"manifest version ${node.get("version")} is not supported (this dsha reads version $Version)")
      }
      val algorithm = Algorithm.all.find(_.id == text("algorithm")) match {
        case Some(a) => a
        case None => return Left(s"unknown algorithm '${text("algorithm")}'")
      }
      val schemaText = text("schema")
      val schemaDigest = Bytes.sha256(schemaText.getBytes(UTF_8))
      if (Bytes.hex(schemaDigest) != text("schema_digest")) return Left("the schema does not match its digest")
      val files = node.get("files")
      if (files == null || !files.isArray) return Left("field 'files' is missing or not an array")
      val entries = (0 until files.size).map(files.get).map { f =>
        val path = Option(f.get("path")).filter(_.isTextual).map(_.asText).getOrElse(
          throw new BadField("a file without a 'path'")
        )
        val sum = Option(f.get("sum")).filter(_.isTextual).map(_.asText).getOrElse(
          throw new BadField(s"file '$path' has no 'sum'")
        )
        Entry(path, long(f, "size"), long(f, "modified"), long(f, "rows"), parseWords(sum, algorithm, path))
      }.toIndexedSeq
      val keyId = Option(node.get("key_id")).map(k =>
        if (k.isTextual && k.asText.matches("[0-9a-f]{32}")) k.asText
        else throw new BadField("field 'key_id' is not 32 hex digits")
      )
      if (algorithm.isInstanceOf[KeyedAlgorithm] && keyId.isEmpty) return Left("a keyed manifest without 'key_id'")
      val mac = Option(node.get("mac")).map(k =>
        if (k.isTextual && k.asText.matches("[0-9a-f]{64}")) k.asText
        else throw new BadField("field 'mac' is not 64 hex digits")
      )
      val m = Manifest(algorithm, text("format"), text("root"), schemaText, schemaDigest, entries, keyId, mac)
      if (entries.map(_.path).distinct.size != entries.size) return Left("a file is listed twice")
      if (Bytes.hex(checksum(m)) != text("checksum")) {
        Left("its checksum does not match its content (edited or damaged)")
      } else Right(m)
    } catch {
      case e: BadField => Left(e.getMessage)
    }
  }

  private final class BadField(message: String) extends Exception(message)

  private def parseWords(hex: String, algorithm: Algorithm, path: String): Array[Long] = {
    val words = algorithm.combiner.words
    // Lower-case ASCII hex only (SPEC.md §12.1): not upper case, nor the other scripts' digits Java's parser takes.
    if (hex.length != 16 * words || !hex.forall(c => (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      throw new BadField(s"file '$path' has a 'sum' that is not ${8 * words} bytes of lower-case hex")
    }
    Array.tabulate(words) { w =>
      (0 until 8).foldLeft(0L) { (v, i) =>
        val at = 16 * w + 2 * i
        v | (java.lang.Long.parseLong(hex.substring(at, at + 2), 16) << (8 * i))
      }
    }
  }

  /** The manifest at `path`: None when there is none, Left(reason) when there is one that cannot be trusted. */
  def read(fileSystem: FileSystem, path: Path): Option[Either[String, Manifest]] = {
    val fs = raw(fileSystem)
    if (!fs.exists(path)) None
    else {
      val in = fs.open(path)
      try Some(parse(new String(readAll(in), UTF_8)))
      catch { case NonFatal(e) => Some(Left(s"cannot be read: ${e.getMessage}")) }
      finally in.close()
    }
  }

  /**
   * Writes the manifest so that a reader sees the old one or the new one, never a part: a temporary file in the same
   * directory, then a rename. (Where a rename does not replace, the old file is deleted first: a reader in between
   * sees no manifest, and reads every file.)
   */
  def write(fileSystem: FileSystem, path: Path, manifest: Manifest): Unit = {
    val fs = raw(fileSystem)
    fs.mkdirs(path.getParent)
    val tmp = new Path(path.getParent, s".${path.getName}.${java.util.UUID.randomUUID()}.tmp")
    val out = fs.create(tmp, false)
    try out.write(manifest.toJson.getBytes(UTF_8))
    finally out.close()
    if (!fs.rename(tmp, path)) {
      fs.delete(path, false)
      if (!fs.rename(tmp, path)) {
        fs.delete(tmp, false)
        throw new java.io.IOException(s"cannot move the dsha manifest into place at $path")
      }
    }
  }

  private def readAll(in: java.io.InputStream): Array[Byte] = {
    val out = new java.io.ByteArrayOutputStream()
    val buffer = new Array[Byte](64 * 1024)
    var n = in.read(buffer)
    while (n >= 0) {
      out.write(buffer, 0, n)
      n = in.read(buffer)
    }
    out.toByteArray
  }

  /** Deletes the manifest at `path`, if any: first, before the files it describes are replaced. */
  def delete(fileSystem: FileSystem, path: Path): Unit = {
    val fs = raw(fileSystem)
    if (fs.exists(path) && !fs.delete(path, false)) throw new java.io.IOException(s"cannot delete $path")
  }

  /**
   * The manifest is its own checksum: on Hadoop's local file system, read and write it without the `.crc` side
   * files, which would turn a hand edit into a checksum error instead of a manifest that does not verify.
   */
  private def raw(fs: FileSystem): FileSystem = fs match {
    case c: ChecksumFileSystem => c.getRawFileSystem
    case other => other
  }

}
