package dev.streamshell.kafka;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;

/** Shipped to the executors with the write's configuration; makes one writer per task. */
final class TransactionalWriterFactory implements DataWriterFactory {
  private static final long serialVersionUID = 1L;

  private final SinkConfig config;

  TransactionalWriterFactory(SinkConfig config) {
    this.config = config;
  }

  @Override
  public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
    return new TransactionalWriter(config, partitionId);
  }
}
