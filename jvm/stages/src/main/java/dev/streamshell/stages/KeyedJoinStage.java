package dev.streamshell.stages;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.streaming.MapState;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StatefulProcessor;
import org.apache.spark.sql.streaming.TTLConfig;
import org.apache.spark.sql.streaming.TimeMode;
import org.apache.spark.sql.streaming.TimerValues;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

import scala.Tuple2;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The changelog path's keyed stage, on the JVM: each input's current rows of a key in Spark's state store, and per
 * micro-batch the weighted change of their join for every key the batch touched (shell/engine/keyed_stage.py is
 * the same stage in Python, and says what it means; the two give the same rows).
 *
 * <p>An upsert input keeps its latest row per primary key: the batch's latest change of a primary key (the largest
 * position, the last of equal ones) replaces it, or, with a weight below 1 (a tombstone, a new row a filter takes
 * out), removes it. Any other input is a multiset: a row's count is its count before plus the weights the batch
 * brings, and a row whose count falls to 0 or below goes. The inputs are joined in order, each on the key with the
 * earlier input it names (inner, left, right, full; semi and anti keep or drop the rows so far by whether the key
 * has a row of that input); a NULL key matches nothing. Out come the joined rows that changed, with their weight:
 * -n for rows that went, +n for rows that came; a row equal before and after cancels out.
 *
 * <p>Why on the JVM: in Python each micro-batch pays a pass to pack rows before the shuffle, a call per key bucket
 * and a round trip to the state server per sub-bucket (docs/changelog-engine.md, "The keyed stage on the JVM").
 * Here it is a {@code transformWithState} operator like Spark's own: one MapState per input, read and written per
 * touched key, rows in Spark's own format.
 *
 * <p>Input rows: every input's payload columns (NULL in the other inputs' rows), the weight (INT), the input's
 * number (INT), the upsert primary key (STRING) and the position (BIGINT), grouped by the key ({@link KeyColumn}).
 * Output rows: the payload columns of the inputs that are not semi or anti joins, and the weight (BIGINT).
 */
public final class KeyedJoinStage extends StatefulProcessor<String, Row, Row> {
  private static final long serialVersionUID = 1L;

  private final int inputs;
  private final boolean[] upsert;
  private final String[] join;
  private final int[] partner;
  private final StructType[] payloadSchema;
  private final int[][] payload;
  private final int weight;
  private final int source;
  private final int primaryKey;
  private final int position;
  private final int[] net;
  private final long[] ttlMs;
  private transient List<MapState<Object, Object>> states;

  /**
   * @param inputJson the input rows' schema, as Spark's JSON of a StructType
   * @param kinds each input's kind: append, changelog or upsert
   * @param joins how each input joins the ones before it: inner, left, right, full, semi or anti ("" for the first)
   * @param partners the earlier input each one's key is equated with
   * @param columns each input's payload columns, as the JSON of a StructType
   * @param control the names of the weight, input number, primary key and position columns
   * @param netColumns the output columns of an upsert sink's primary key, when the batch's changes go to such a
   *     sink as they are: one change per value of them, the row now (+1) if there is one, else the row gone (-1),
   *     as the sink keeps it; empty: every changed row with its weight
   * @param stateTtlMs each input's state TTL in milliseconds, 0 for none: a row of the input that was not written
   *     for that long is gone, as if it had never come (nothing is emitted for it), as Flink's state TTL has it; any
   *     TTL needs the operator's processing-time mode ({@link #timeMode})
   */
  public KeyedJoinStage(String inputJson, List<String> kinds, List<String> joins, List<Integer> partners,
                        List<String> columns, List<String> control, List<Integer> netColumns,
                        List<? extends Number> stateTtlMs) {
    StructType input = (StructType) DataType.fromJson(inputJson);
    this.inputs = kinds.size();
    this.upsert = new boolean[inputs];
    this.join = new String[inputs];
    this.partner = new int[inputs];
    this.payloadSchema = new StructType[inputs];
    this.payload = new int[inputs][];
    for (int i = 0; i < inputs; i++) {
      upsert[i] = kinds.get(i).equals("upsert");
      join[i] = joins.get(i);
      partner[i] = partners.get(i);
      payloadSchema[i] = (StructType) DataType.fromJson(columns.get(i));
      StructField[] fields = payloadSchema[i].fields();
      payload[i] = new int[fields.length];
      for (int c = 0; c < fields.length; c++) {
        payload[i][c] = input.fieldIndex(fields[c].name());
      }
    }
    this.weight = input.fieldIndex(control.get(0));
    this.source = input.fieldIndex(control.get(1));
    this.primaryKey = input.fieldIndex(control.get(2));
    this.position = input.fieldIndex(control.get(3));
    this.net = netColumns.stream().mapToInt(Integer::intValue).toArray();
    this.ttlMs = stateTtlMs.stream().mapToLong(Number::longValue).toArray();
  }

  /** The time mode the operator runs in: processing time when an input's state has a TTL (Spark's TTL needs it). */
  public static TimeMode timeMode(List<? extends Number> stateTtlMs) {
    return stateTtlMs.stream().anyMatch(ms -> ms.longValue() > 0) ? TimeMode.ProcessingTime() : TimeMode.None();
  }

  private TTLConfig ttl(int input) {
    return ttlMs[input] > 0 ? new TTLConfig(Duration.ofMillis(ttlMs[input])) : TTLConfig.NONE();
  }

  /** The schema of the rows this stage emits: the joined inputs' payload columns, and the weight. */
  public static StructType outputSchema(List<String> joins, List<String> columns, String weightColumn) {
    StructType out = new StructType();
    for (int i = 0; i < joins.size(); i++) {
      if (!isFilter(joins.get(i))) {
        for (StructField field : ((StructType) DataType.fromJson(columns.get(i))).fields()) {
          out = out.add(field);
        }
      }
    }
    return out.add(weightColumn, DataTypes.LongType, true);
  }

  private static boolean isFilter(String join) {
    return join.equals("semi") || join.equals("anti");
  }

  @Override
  @SuppressWarnings("unchecked")
  public void init(OutputMode outputMode, TimeMode timeMode) {
    states = new ArrayList<>(inputs);
    for (int i = 0; i < inputs; i++) {
      MapState<?, ?> state = upsert[i]
          ? getHandle().getMapState("rows" + i, Encoders.STRING(), Encoders.row(payloadSchema[i]), ttl(i))
          : getHandle().getMapState("rows" + i, Encoders.row(payloadSchema[i]), Encoders.LONG(), ttl(i));
      states.add((MapState<Object, Object>) state);
    }
  }

  /** A row of one input with its count. */
  private record Counted(Row row, long count) {}

  @Override
  public scala.collection.Iterator<Row> handleInputRows(
      String key, scala.collection.Iterator<Row> rows, TimerValues timerValues) {
    List<List<Row>> batch = new ArrayList<>(inputs);
    for (int i = 0; i < inputs; i++) {
      batch.add(new ArrayList<>());
    }
    while (rows.hasNext()) {
      Row row = rows.next();
      batch.get(row.getInt(source)).add(row);
    }
    List<List<Counted>> before = new ArrayList<>(inputs);
    List<List<Counted>> after = new ArrayList<>(inputs);
    for (int i = 0; i < inputs; i++) {
      List<Counted> was = read(i);
      before.add(was);
      after.add(batch.get(i).isEmpty() ? was : apply(i, batch.get(i)));
    }
    Map<Row, Long> change = new HashMap<>();
    boolean matches = !KeyColumn.NULL.equals(key);
    for (Counted joined : join(matches, before)) {
      change.merge(joined.row(), -joined.count(), Long::sum);
    }
    for (Counted joined : join(matches, after)) {
      change.merge(joined.row(), joined.count(), Long::sum);
    }
    List<Row> out = new ArrayList<>();
    if (net.length > 0) {
      netted(change, out);
      return CollectionConverters.asScala(out.iterator());
    }
    for (Map.Entry<Row, Long> entry : change.entrySet()) {
      if (entry.getValue() != 0L) {
        out.add(weighted(entry.getKey(), entry.getValue()));
      }
    }
    return CollectionConverters.asScala(out.iterator());
  }

  /** The changes as an upsert sink keeps them: per value of the sink's key, the row now, else the row gone. */
  private void netted(Map<Row, Long> change, List<Row> out) {
    Map<List<Object>, Row> now = new LinkedHashMap<>();
    Map<List<Object>, Row> gone = new LinkedHashMap<>();
    for (Map.Entry<Row, Long> entry : change.entrySet()) {
      long w = entry.getValue();
      if (w == 0L) {
        continue;
      }
      Row row = entry.getKey();
      List<Object> key = new ArrayList<>(net.length);
      for (int c : net) {
        key.add(row.get(c));
      }
      if (w > 0) {
        now.put(key, row);
      } else {
        gone.putIfAbsent(key, row);
      }
    }
    for (Row row : now.values()) {
      out.add(weighted(row, 1L));
    }
    for (Map.Entry<List<Object>, Row> entry : gone.entrySet()) {
      if (!now.containsKey(entry.getKey())) {
        out.add(weighted(entry.getValue(), -1L));
      }
    }
  }

  private List<Counted> read(int i) {
    List<Counted> rows = new ArrayList<>();
    scala.collection.Iterator<Tuple2<Object, Object>> entries = states.get(i).iterator();
    while (entries.hasNext()) {
      Tuple2<Object, Object> entry = entries.next();
      rows.add(upsert[i] ? new Counted((Row) entry._2(), 1L) : new Counted((Row) entry._1(), (Long) entry._2()));
    }
    return rows;
  }

  /** The batch's rows of input {@code i} applied to its state (written); its rows after. */
  private List<Counted> apply(int i, List<Row> changes) {
    MapState<Object, Object> state = states.get(i);
    if (upsert[i]) {
      Map<String, Row> latest = new HashMap<>();
      Map<String, Long> at = new HashMap<>();
      for (Row row : changes) {
        String pk = row.isNullAt(primaryKey) ? KeyColumn.NULL : row.getString(primaryKey);
        long p = row.isNullAt(position) ? 0L : row.getLong(position);
        Long seen = at.get(pk);
        if (seen == null || p >= seen) {
          latest.put(pk, row);
          at.put(pk, p);
        }
      }
      for (Map.Entry<String, Row> change : latest.entrySet()) {
        Row row = change.getValue();
        if (!row.isNullAt(weight) && row.getInt(weight) > 0) {
          state.updateValue(change.getKey(), payloadOf(i, row));
        } else if (state.containsKey(change.getKey())) {
          state.removeKey(change.getKey());
        }
      }
    } else {
      Map<Row, Long> sums = new HashMap<>();
      for (Row row : changes) {
        sums.merge(payloadOf(i, row), row.isNullAt(weight) ? 0L : (long) row.getInt(weight), Long::sum);
      }
      for (Map.Entry<Row, Long> sum : sums.entrySet()) {
        Object was = state.getValue(sum.getKey());
        long count = (was == null ? 0L : (Long) was) + sum.getValue();
        if (count > 0) {
          state.updateValue(sum.getKey(), count);
        } else if (was != null) {
          state.removeKey(sum.getKey());
        }
      }
    }
    return read(i);
  }

  /** A combination of one row (or none) per input, and its multiplicity. */
  private record Combination(Row[] parts, long count) {
    Combination with(int i, Counted row) {
      Row[] next = parts.clone();
      next[i] = row.row();
      return new Combination(next, count * row.count());
    }
  }

  /** The join of the inputs' rows of one key, as joined rows with their multiplicity. */
  private List<Counted> join(boolean keyMatches, List<List<Counted>> rows) {
    List<Combination> joined = new ArrayList<>();
    for (Counted row : rows.get(0)) {
      joined.add(new Combination(new Row[inputs], 1L).with(0, row));
    }
    for (int i = 1; i < inputs; i++) {
      List<Counted> right = rows.get(i);
      int p = partner[i];
      boolean hasRows = keyMatches && !right.isEmpty();
      List<Combination> next = new ArrayList<>();
      boolean anyMatch = false;
      for (Combination left : joined) {
        boolean matches = hasRows && left.parts()[p] != null;
        anyMatch |= matches;
        switch (join[i]) {
          case "semi" -> { if (matches) next.add(left); }
          case "anti" -> { if (!matches) next.add(left); }
          default -> {
            if (matches) {
              for (Counted r : right) {
                next.add(left.with(i, r));
              }
            } else if (join[i].equals("left") || join[i].equals("full")) {
              next.add(left);
            }
          }
        }
      }
      if ((join[i].equals("right") || join[i].equals("full")) && !anyMatch) {
        for (Counted r : right) {
          next.add(new Combination(new Row[inputs], 1L).with(i, r));
        }
      }
      joined = next;
    }
    List<Counted> out = new ArrayList<>(joined.size());
    for (Combination combination : joined) {
      out.add(new Counted(joinedRow(combination.parts()), combination.count()));
    }
    return out;
  }

  private Row joinedRow(Row[] parts) {
    List<Object> values = new ArrayList<>();
    for (int i = 0; i < inputs; i++) {
      if (isFilter(join[i])) {
        continue;
      }
      int width = payload[i].length;
      for (int c = 0; c < width; c++) {
        values.add(parts[i] == null ? null : parts[i].get(c));
      }
    }
    return RowFactory.create(values.toArray());
  }

  private Row payloadOf(int i, Row row) {
    Object[] values = new Object[payload[i].length];
    for (int c = 0; c < values.length; c++) {
      values[c] = row.get(payload[i][c]);
    }
    return RowFactory.create(values);
  }

  private static Row weighted(Row row, long w) {
    Object[] values = new Object[row.length() + 1];
    for (int c = 0; c < row.length(); c++) {
      values[c] = row.get(c);
    }
    values[row.length()] = w;
    return RowFactory.create(values);
  }
}
