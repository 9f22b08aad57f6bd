package io.dsha.cache;

import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;

/**
 * The rows of batches of Spark's in-memory cache, for chosen columns, decoded column by column ({@link CachedColumn})
 * and written into one reused {@link UnsafeRow}: the rows Spark's own reader of the cache gives, byte for byte. One
 * instance per task; not thread-safe. A row is valid until the next call to {@link #next()} or {@link #load}.
 */
public final class CachedBatchReader {
  private final CachedColumn[] columns;
  private final int[] columnIndexes;
  private final UnsafeRowWriter writer;
  private int rows;
  private int row;

  /**
   * @param columns       per output field, how its column is decoded
   * @param columnIndexes per output field, the index of its column in a batch
   */
  public CachedBatchReader(CachedColumn[] columns, int[] columnIndexes) {
    if (columns.length != columnIndexes.length) throw new IllegalArgumentException("one column index per column");
    this.columns = columns;
    this.columnIndexes = columnIndexes;
    this.writer = new UnsafeRowWriter(columns.length);
  }

  /**
   * Decodes a batch of {@code numRows} rows from its column buffers. Returns false when a column's encoding is not one
   * this reader knows (then no row is available and the caller reads the batch otherwise).
   */
  public boolean load(byte[][] buffers, int numRows) {
    rows = 0;
    row = 0;
    for (int i = 0; i < columns.length; i++) {
      if (!columns[i].load(buffers[columnIndexes[i]], numRows)) return false;
    }
    rows = numRows;
    return true;
  }

  public boolean hasNext() {
    return row < rows;
  }

  public UnsafeRow next() {
    writer.reset();
    writer.zeroOutNullBytes();
    for (int i = 0; i < columns.length; i++) columns[i].write(writer, i, row);
    row++;
    return writer.getRow();
  }
}
