package dev.streamshell.stages;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Collections;

import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.ExpiredTimerInfo;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.streaming.ValueState;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;

import scala.jdk.javaapi.CollectionConverters;

/**
 * A deduplication that keeps each key's first row in event time, as Flink's keep-first deduplication on a time
 * attribute ({@code ROW_NUMBER() OVER (PARTITION BY k ORDER BY rowtime ASC) = 1}) does: per key the row with the
 * smallest time waits (a later-arriving row replaces it only with a strictly smaller time), and leaves once, when
 * the watermark reaches its time; every row of the key after that is ignored, and a row at or behind the watermark
 * is late and dropped. So the result only grows (no row is taken back), and a window aggregation or an append-only
 * sink can read it.
 *
 * <p>State per key: the waiting row and whether the key's row has left. Input and output rows have the same
 * schema; the output's time column is its event time (the watermark goes on through it).
 */
public final class FirstRowByTime extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;

  private final StructType schema;
  private final int time;
  private transient ValueState<Row> waiting;
  private transient ValueState<Boolean> emitted;

  /**
   * @param schemaJson the rows' schema, as Spark's JSON of a StructType
   * @param timeColumn the time attribute the rows are ordered by
   */
  public FirstRowByTime(String schemaJson, String timeColumn) {
    this.schema = (StructType) DataType.fromJson(schemaJson);
    this.time = schema.fieldIndex(timeColumn);
  }

  @Override
  public void init(OutputMode outputMode, TimeMode timeMode) {
    waiting = getHandle().getValueState("waiting", Encoders.row(schema), TTLConfig.NONE());
    emitted = getHandle().getValueState("emitted", Encoders.BOOLEAN(), TTLConfig.NONE());
  }

  @Override
  public scala.collection.Iterator<Row> handleInputRows(
      String key, scala.collection.Iterator<Row> rows, TimerValues timerValues) {
    if (emitted.exists()) {
      return CollectionConverters.asScala(Collections.<Row>emptyIterator());
    }
    long watermark = timerValues.getCurrentWatermarkInMs() * 1000L;
    Row best = waiting.exists() ? waiting.get() : null;
    Row first = best;
    while (rows.hasNext()) {
      Row row = rows.next();
      if (row.isNullAt(time)) {
        continue;  // no time: never reached by a watermark
      }
      long at = micros(row.get(time));
      if (at <= watermark) {
        continue;  // late
      }
      if (best == null || at < micros(best.get(time))) {
        best = row;
      }
    }
    if (best != first) {
      if (first != null) {
        getHandle().deleteTimer(Math.floorDiv(micros(first.get(time)), 1000L));
      }
      getHandle().registerTimer(Math.floorDiv(micros(best.get(time)), 1000L));
      waiting.update(best);
    }
    return CollectionConverters.asScala(Collections.<Row>emptyIterator());
  }

  @Override
  public scala.collection.Iterator<Row> handleExpiredTimer(
      String key, TimerValues timerValues, ExpiredTimerInfo expiredTimerInfo) {
    if (!waiting.exists()) {
      return CollectionConverters.asScala(Collections.<Row>emptyIterator());
    }
    Row row = waiting.get();
    waiting.clear();
    emitted.update(true);
    return CollectionConverters.asScala(Collections.singletonList(row).iterator());
  }

  /** A TIMESTAMP value in microseconds since the epoch, as Spark hands it over (either of its Java types). */
  private static long micros(Object value) {
    if (value instanceof java.sql.Timestamp ts) {
      return Math.floorDiv(ts.getTime(), 1000L) * 1_000_000L + ts.getNanos() / 1000L;
    }
    if (value instanceof Instant instant) {
      return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1000L;
    }
    if (value instanceof LocalDateTime local) {
      Instant instant = local.toInstant(ZoneOffset.UTC);
      return instant.getEpochSecond() * 1_000_000L + instant.getNano() / 1000L;
    }
    throw new IllegalArgumentException("not a timestamp: " + value);
  }
}
