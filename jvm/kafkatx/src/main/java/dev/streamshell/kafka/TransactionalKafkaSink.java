package dev.streamshell.kafka;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.Write;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A batch writer into one Kafka topic that writes each task's rows in one Kafka transaction and makes a replayed
 * micro-batch a no-op: the exactly-once sink of the shell's `kafka` and `upsert-kafka` tables.
 *
 * <p>Spark's own Kafka sink sends with a plain producer, so a micro-batch that runs again after a crash (Spark
 * replays the batch it had not committed) sends its rows again. This sink is driven the same way, from the
 * streaming query's foreachBatch, with {@code df.write.format(TransactionalKafkaSink.class.getName())
 * .mode("append")}, and the batch's id and the query's id as options. Each task (one partition of the batch)
 * writes on the executor, in the JVM, with a transactional producer whose {@code transactional.id} is
 * {@code <prefix>-<partition>}: opening it fences any earlier producer of that id (a task attempt that is still
 * running, the process that was killed) and aborts what it left open. In the same transaction as the rows the task
 * records the batch id as a consumer-group offset ({@code sendOffsetsToTransaction}; the group is the
 * transactional id), so the rows and the record of them become visible together or not at all. A task that finds
 * its partition's record at or past this batch (for the same query) writes nothing. How it works, what it costs
 * and what it assumes: docs/reliability.md, "Exactly once into Kafka".
 *
 * <p>Options: {@code topic}, {@code transactional-id-prefix}, {@code query-id}, {@code batch-id}, and every
 * {@code kafka.*} option as a Kafka client property (as Spark's Kafka sink takes them). The frame has a binary
 * {@code key} and {@code value} (either may be null) and optionally {@code headers} (array of struct of string
 * key and binary value), as Spark's Kafka sink.
 */
public final class TransactionalKafkaSink implements TableProvider {

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return new StructType();
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return new SinkTable(properties);
  }

  /** The topic as a table that accepts any frame (the columns are checked when the write is planned). */
  static final class SinkTable implements Table, SupportsWrite {
    private final Map<String, String> properties;

    SinkTable(Map<String, String> properties) {
      this.properties = new HashMap<>(properties);
    }

    @Override
    public String name() {
      return "streamshell-kafka-transactional:" + properties.getOrDefault("topic", "?");
    }

    @Override
    public StructType schema() {
      return new StructType();
    }

    @Override
    public Set<TableCapability> capabilities() {
      return EnumSet.of(TableCapability.BATCH_WRITE, TableCapability.ACCEPT_ANY_SCHEMA);
    }

    @Override
    public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
      SinkConfig config = SinkConfig.from(info.options(), info.schema());
      return new WriteBuilder() {
        @Override
        public Write build() {
          return new Write() {
            @Override
            public BatchWrite toBatch() {
              return new TransactionalBatchWrite(config);
            }
          };
        }
      };
    }
  }

  /** The driver's side: nothing to do at commit, each task committed its own transaction. */
  static final class TransactionalBatchWrite implements BatchWrite {
    private final SinkConfig config;

    TransactionalBatchWrite(SinkConfig config) {
      this.config = config;
    }

    @Override
    public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
      return new TransactionalWriterFactory(config);
    }

    @Override
    public void commit(WriterCommitMessage[] messages) {}

    @Override
    public void abort(WriterCommitMessage[] messages) {}
  }
}
