package dev.streamshell.kafka;

import java.io.Serializable;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * One task's rows in one Kafka transaction. Nothing is opened for a partition without rows. The first row takes a
 * producer (fresh: initTransactions, then the batch record is read), and when the record shows this batch of this
 * query committed already (a replay after a crash, or a task attempt after one that committed) every row is
 * dropped; otherwise the rows are sent in a transaction that ends with the batch record, and commit() commits it.
 * Either way the rows are counted and digested (a sum of a 64-bit hash of each row's key and value, which does not
 * depend on their order): a replay whose rows differ from the ones recorded fails, naming the batch, instead of
 * leaving some rows out.
 */
final class TransactionalWriter implements DataWriter<InternalRow> {
  private static final long RECORD_READ_TIMEOUT_MS = 60_000;

  private final SinkConfig config;
  private final int partition;
  private final AtomicReference<Exception> sendError = new AtomicReference<>();
  private final Callback callback = (metadata, error) -> {
    if (error != null) {
      sendError.compareAndSet(null, error);
    }
  };
  private ProducerPool.Handle handle;
  private boolean skip;
  private boolean inTransaction;
  private long rows;
  private long digest;

  TransactionalWriter(SinkConfig config, int partition) {
    this.config = config;
    this.partition = partition;
  }

  /** What a task reports to the driver. */
  static final class Committed implements WriterCommitMessage, Serializable {
    private static final long serialVersionUID = 1L;
    final int partition;
    final long rows;
    final boolean skipped;

    Committed(int partition, long rows, boolean skipped) {
      this.partition = partition;
      this.rows = rows;
      this.skipped = skipped;
    }
  }

  @Override
  public void write(InternalRow row) {
    if (handle == null) {
      open();
    }
    byte[] key = config.keyIndex >= 0 && !row.isNullAt(config.keyIndex) ? row.getBinary(config.keyIndex) : null;
    byte[] value = row.isNullAt(config.valueIndex) ? null : row.getBinary(config.valueIndex);
    rows++;
    digest += hash(key, value);
    if (skip) {
      return;
    }
    failOnSendError();
    RecordHeaders headers = null;
    if (config.headersIndex >= 0 && !row.isNullAt(config.headersIndex)) {
      headers = new RecordHeaders();
      ArrayData entries = row.getArray(config.headersIndex);
      for (int i = 0; i < entries.numElements(); i++) {
        InternalRow entry = entries.getStruct(i, 2);
        String name = entry.getString(0);
        headers.add(name, entry.isNullAt(1) ? null : entry.getBinary(1));
      }
    }
    handle.producer.send(new ProducerRecord<>(config.topic, null, null, key, value, headers), callback);
  }

  /** A 64-bit hash of a row's key and value (null apart from empty). */
  static long hash(byte[] key, byte[] value) {
    long h = 0x9E3779B97F4A7C15L;
    h = mix(h, key);
    h = mix(h * 31 + 7, value);
    return h ^ (h >>> 29);
  }

  private static long mix(long h, byte[] bytes) {
    if (bytes == null) {
      return h * 0x100000001B3L + 1;
    }
    h ^= bytes.length;
    for (byte b : bytes) {
      h = (h ^ (b & 0xff)) * 0x100000001B3L;
    }
    return h * 0xBF58476D1CE4E5B9L;
  }

  private void open() {
    handle = ProducerPool.take(config, partition);
    try {
      if (!config.queryId.isEmpty()) {
        if (!handle.recordKnown) {
          handle.record = BatchRecord.read(ProducerPool.admin(config), handle.transactionalId, config,
              RECORD_READ_TIMEOUT_MS);
          handle.recordKnown = true;
        }
        if (handle.record != null && handle.record.covers(config.queryId, config.batchId)) {
          skip = true;
          return;
        }
      }
      handle.producer.beginTransaction();
      inTransaction = true;
    } catch (RuntimeException e) {
      drop();
      throw e;
    }
  }

  private void failOnSendError() {
    Exception error = sendError.get();
    if (error != null) {
      throw new KafkaException("a send of transactional id '" + handle.transactionalId + "' to topic '"
          + config.topic + "' failed: " + error, error);
    }
  }

  @Override
  public WriterCommitMessage commit() {
    if (handle == null) {
      return new Committed(partition, 0, false);
    }
    try {
      if (skip && handle.record.batchId == config.batchId && !handle.record.sameRows(rows, digest)) {
        throw new IllegalStateException("batch " + config.batchId + " run again gives transactional id '"
            + handle.transactionalId + "' other rows than it committed before (" + rows + " rows, digest "
            + Long.toHexString(digest) + "; committed: " + handle.record.rows + " rows, digest "
            + Long.toHexString(handle.record.digest) + "): the query does not give the same rows when a batch "
            + "runs again, so exactly-once cannot hold (rand(), the current time, or input that changed)");
      }
      if (!skip) {
        handle.producer.flush();
        failOnSendError();
        if (!config.queryId.isEmpty()) {
          handle.producer.sendOffsetsToTransaction(
              Map.of(BatchRecord.partition(config), BatchRecord.offset(config, rows, digest)),
              new ConsumerGroupMetadata(handle.transactionalId));
        }
        handle.producer.commitTransaction();
        inTransaction = false;
        if (!config.queryId.isEmpty()) {
          handle.record = new BatchRecord(config.queryId, config.batchId, rows, digest);
          handle.recordKnown = true;
        }
      }
    } catch (RuntimeException e) {
      drop(); // the transaction's outcome may be unknown: a fresh producer reads the record again
      throw e;
    }
    ProducerPool.giveBack(handle);
    handle = null;
    return new Committed(partition, rows, skip);
  }

  @Override
  public void abort() {
    if (handle == null) {
      return;
    }
    if (inTransaction) {
      try {
        handle.producer.abortTransaction();
        inTransaction = false;
      } catch (RuntimeException e) {
        drop();
        return;
      }
    }
    ProducerPool.giveBack(handle);
    handle = null;
  }

  @Override
  public void close() {
    if (handle != null) {
      drop();
    }
  }

  private void drop() {
    if (handle != null) {
      ProducerPool.discard(handle);
      handle = null;
    }
  }

}
