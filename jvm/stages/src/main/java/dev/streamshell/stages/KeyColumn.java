package dev.streamshell.stages;

import org.apache.spark.api.java.function.MapFunction;
import org.apache.spark.sql.Row;

/** A row's key for {@code groupByKey}: one STRING column (the changelog path makes every key one). */
public final class KeyColumn implements MapFunction<Row, String> {
  private static final long serialVersionUID = 1L;

  private final int index;

  public KeyColumn(int index) {
    this.index = index;
  }

  @Override
  public String call(Row row) {
    return row.isNullAt(index) ? null : row.getString(index);
  }
}
