package dev.streamshell.stages;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

import scala.jdk.javaapi.CollectionConverters;

/**
 * The keyed stage of a query over one upsert table: each primary key's current row kept in Spark's state store,
 * and per micro-batch the weighted difference of the keys it touched (the old row -1, the new row +1; nothing when
 * they are equal). The rest of the query is Spark SQL over those weighted rows (shell/engine/changelog.py).
 *
 * <p>Why on the JVM: this is the changelog path's commonest stage (an aggregate or a projection of an upsert
 * topic), and in Python (shell/engine/stage_operators.py) it costs each micro-batch a pass to pack its rows, a
 * Python call per key bucket and a round trip to the state server per sub-bucket it touches. Here it is a
 * `transformWithState` operator like Spark's own, with the same meaning: the latest change of a key in the batch
 * (the largest position, the last of equal ones) replaces its row, or, with a weight below 1 (a tombstone, or a
 * new row a filter takes out), removes it.
 *
 * <p>Input rows: the payload columns, the weight {@code weight} (INT) and the position {@code position} (BIGINT),
 * grouped by the key ({@link KeyColumn}). Output rows: the payload columns and the weight (BIGINT).
 */
public final class UpsertVersions extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;

  private final StructType stored;
  private final int[] payload;
  private final int weight;
  private final int position;
  private transient ValueState<Row> current;

  /**
   * @param inputJson the input rows' schema, as Spark's JSON of a StructType
   * @param payloadJson the payload columns (the row kept and emitted), the same way
   * @param weightColumn the weight's column
   * @param positionColumn the position's column (a change's order in its partition)
   */
  public UpsertVersions(String inputJson, String payloadJson, String weightColumn, String positionColumn) {
    StructType input = (StructType) DataType.fromJson(inputJson);
    this.stored = (StructType) DataType.fromJson(payloadJson);
    this.payload = new int[stored.fields().length];
    for (int i = 0; i < payload.length; i++) {
      payload[i] = input.fieldIndex(stored.fields()[i].name());
    }
    this.weight = input.fieldIndex(weightColumn);
    this.position = input.fieldIndex(positionColumn);
  }

  /** The schema of the rows this stage emits: the payload and the weight. */
  public static StructType outputSchema(String payloadJson, String weightColumn) {
    return ((StructType) DataType.fromJson(payloadJson)).add(weightColumn, DataTypes.LongType, true);
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    current = getHandle().getValueState("current", Encoders.row(stored), TTLConfig.NONE());
  }

  @Override
  public scala.collection.Iterator<Row> handleInputRows(
      String key, scala.collection.Iterator<Row> rows, TimerValues timerValues) {
    Row latest = null;
    long latestPosition = Long.MIN_VALUE;
    while (rows.hasNext()) {
      Row row = rows.next();
      long at = row.isNullAt(position) ? 0L : row.getLong(position);
      if (latest == null || at >= latestPosition) {
        latest = row;
        latestPosition = at;
      }
    }
    if (latest == null) {
      return CollectionConverters.asScala(Collections.<Row>emptyIterator());
    }
    Row before = current.exists() ? current.get() : null;
    Row after = !latest.isNullAt(weight) && latest.getInt(weight) > 0 ? payloadOf(latest) : null;
    if (before == null ? after == null : before.equals(after)) {
      return CollectionConverters.asScala(Collections.<Row>emptyIterator());
    }
    List<Row> changes = new ArrayList<>(2);
    if (before != null) {
      changes.add(weighted(before, -1L));
    }
    if (after != null) {
      changes.add(weighted(after, 1L));
      current.update(after);
    } else {
      current.clear();
    }
    return CollectionConverters.asScala(changes.iterator());
  }

  private Row payloadOf(Row row) {
    Object[] values = new Object[payload.length];
    for (int i = 0; i < payload.length; i++) {
      values[i] = row.get(payload[i]);
    }
    return RowFactory.create(values);
  }

  private static Row weighted(Row row, long w) {
    Object[] values = new Object[row.length() + 1];
    for (int i = 0; i < row.length(); i++) {
      values[i] = row.get(i);
    }
    values[row.length()] = w;
    return RowFactory.create(values);
  }
}
