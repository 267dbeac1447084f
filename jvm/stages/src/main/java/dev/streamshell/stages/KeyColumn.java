package dev.streamshell.stages;

import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Row;

/**
 * A row's key for {@code groupByKey}: one STRING column (the changelog path makes every key one). A NULL key is
 * {@link #NULL}, since {@code transformWithState} keeps no state under a NULL grouping key; the stage knows it
 * matches nothing.
 */
public final class KeyColumn implements MapFunction<Row, String> {
  private static final long serialVersionUID = 1L;

  /** The key of rows whose key is NULL: no text a key can have (a key is a value cast to text, or JSON). */
  public static final String NULL = "\u0000null";

  private final int index;

  public KeyColumn(int index) {
    this.index = index;
  }

  @Override
  public String call(Row row) {
    return row.isNullAt(index) ? NULL : row.getString(index);
  }
}
