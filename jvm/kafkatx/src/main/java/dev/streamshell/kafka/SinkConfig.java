package dev.streamshell.kafka;

import java.io.Serializable;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/** What every task of one write needs, checked once on the driver and shipped with the writer factory. */
final class SinkConfig implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Kafka's own default is 60 s; see docs/reliability.md for how to choose it. */
  static final String DEFAULT_TRANSACTION_TIMEOUT_MS = "60000";

  final String topic;
  final String prefix;
  final String queryId; // empty outside a streaming query: no batch record then
  final long batchId;
  final Map<String, String> clientProperties;
  final int keyIndex;
  final int valueIndex;
  final int headersIndex;

  private SinkConfig(String topic, String prefix, String queryId, long batchId, Map<String, String> clientProperties,
      int keyIndex, int valueIndex, int headersIndex) {
    this.topic = topic;
    this.prefix = prefix;
    this.queryId = queryId;
    this.batchId = batchId;
    this.clientProperties = clientProperties;
    this.keyIndex = keyIndex;
    this.valueIndex = valueIndex;
    this.headersIndex = headersIndex;
  }

  static SinkConfig from(CaseInsensitiveStringMap options, StructType schema) {
    String topic = required(options, "topic");
    String prefix = required(options, "transactional-id-prefix");
    String queryId = options.getOrDefault("query-id", "");
    long batchId = Long.parseLong(options.getOrDefault("batch-id", "-1"));
    Map<String, String> client = new HashMap<>();
    for (Map.Entry<String, String> option : options.asCaseSensitiveMap().entrySet()) {
      if (option.getKey().toLowerCase(Locale.ROOT).startsWith("kafka.")) {
        client.put(option.getKey().substring("kafka.".length()), option.getValue());
      }
    }
    if (client.get("bootstrap.servers") == null) {
      throw new IllegalArgumentException("option 'kafka.bootstrap.servers' is required");
    }
    client.putIfAbsent("transaction.timeout.ms", DEFAULT_TRANSACTION_TIMEOUT_MS);
    int key = index(schema, "key", DataTypes.BinaryType);
    int value = index(schema, "value", DataTypes.BinaryType);
    if (value < 0) {
      throw new IllegalArgumentException("the frame needs a binary 'value' column, it has " + schema.simpleString());
    }
    int headers = schema.getFieldIndex("headers").isDefined() ? (Integer) schema.getFieldIndex("headers").get() : -1;
    if (headers >= 0 && !(schema.fields()[headers].dataType() instanceof ArrayType)) {
      throw new IllegalArgumentException("'headers' must be an array of (key string, value binary)");
    }
    return new SinkConfig(topic, prefix, queryId, batchId, client, key, value, headers);
  }

  String transactionalId(int partition) {
    return prefix + "-" + partition;
  }

  private static String required(CaseInsensitiveStringMap options, String key) {
    String value = options.get(key);
    if (value == null || value.isEmpty()) {
      throw new IllegalArgumentException("option '" + key + "' is required");
    }
    return value;
  }

  private static int index(StructType schema, String name, DataType type) {
    for (int i = 0; i < schema.fields().length; i++) {
      StructField field = schema.fields()[i];
      if (field.name().equals(name)) {
        if (!(field.dataType() instanceof BinaryType)) {
          throw new IllegalArgumentException("column '" + name + "' must be binary, it is " + field.dataType().simpleString());
        }
        return i;
      }
    }
    return -1;
  }
}
