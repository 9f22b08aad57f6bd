package io.dsha.files

import java.io.ByteArrayOutputStream
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.FileStatus
import org.apache.spark.sql.DataFrame

import io.dsha.algorithm.DshaV1
import io.dsha.output.DigestFormat
import io.dsha.types.CanonicalSchema
import io.dsha.util.Bytes

/**
 * `dsha-meta-v1` (SPEC.md §13): an approximate fingerprint from file metadata only — the schema and, per file, its
 * path, size, modification time and (where the file system reports one) ETag — constant in the data size. It is
 * not a content digest and has its own id and multihash code, so it can never be mistaken for one: it changes when
 * a file is touched although its rows did not, and it misses a rewrite that keeps path, size and modification time.
 */
object MetadataDigest {
  val Id = "dsha-meta-v1"

  /** Multicodec private-use range, beside dsha-v1's 0x3d5a01. */
  val MultihashCode = 0x3d5a80

  final case class Result(digest: String, files: Int, bytes: Long, schemaText: String, schemaDigestHex: String)

  def of(df: DataFrame): Result = {
    val schema =
      try CanonicalSchema.of(df.schema.fields.toSeq.map(f => f.name -> f.dataType), DshaV1.description)
      catch { case e: CanonicalSchema.Unsupported => fail(s"cannot describe column ${e.path}: ${e.reason}") }
    val files =
      try FileListing.of(df).sortBy(_.getPath.toString)(Manifest.PathOrder)
      catch {
        case e: IllegalArgumentException => fail(s"but this DataFrame is not one read from files (${e.getMessage})")
      }
    val out = new ByteArrayOutputStream()
    def text(s: String): Unit = {
      val b = s.getBytes(UTF_8)
      Bytes.writeIntLE(out, b.length)
      out.write(b)
    }
    out.write(Id.getBytes(UTF_8))
    out.write(schema.digest)
    Bytes.writeLongLE(out, files.size.toLong)
    files.foreach { st =>
      text(st.getPath.toString)
      Bytes.writeLongLE(out, st.getLen)
      Bytes.writeLongLE(out, st.getModificationTime)
      text(etag(st))
    }
    val multihash = DigestFormat.multihash(MultihashCode, Bytes.sha256(out.toByteArray))
    Result(DigestFormat.multibase(multihash), files.size, files.map(_.getLen).sum, schema.text, schema.digestHex)
  }

  /** The ETag an object store reports for the file (Hadoop's `EtagSource`, 3.3.5+), else "". */
  private def etag(st: FileStatus): String =
    try {
      st.getClass.getMethods.find(m => m.getName == "getEtag" && m.getParameterCount == 0) match {
        case Some(m) => Option(m.invoke(st)).map(_.toString).getOrElse("")
        case None => ""
      }
    } catch { case _: ReflectiveOperationException => "" }

  private def fail(message: String): Nothing =
    throw new IllegalArgumentException(s"dsha: an approximate fingerprint reads file metadata, $message")
}
