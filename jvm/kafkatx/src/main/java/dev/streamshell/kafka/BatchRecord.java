package dev.streamshell.kafka;

import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsOptions;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;

/**
 * The record of the last micro-batch a transactional id committed: a consumer-group offset, written in the same
 * transaction as the batch's rows ({@code sendOffsetsToTransaction}), so it is visible exactly when they are.
 *
 * <p>The group is the transactional id itself (one group per task partition: no two writers share one); the
 * offset is kept for partition 0 of the sink topic (a group offset must name a partition that exists); its value is
 * the batch id and its metadata names the query, so a new query that reuses the prefix is not mistaken for a
 * replay of an old one, and the rows the task wrote (their number and an order-free digest of their bytes), so a
 * replay that would skip different rows fails instead of losing them.
 */
final class BatchRecord {
  static final String TAG = "streamshell-batch";

  final String queryId;
  final long batchId;
  final long rows; // -1: not recorded
  final long digest;

  BatchRecord(String queryId, long batchId, long rows, long digest) {
    this.queryId = queryId;
    this.batchId = batchId;
    this.rows = rows;
    this.digest = digest;
  }

  /** Whether a replay's rows are the ones this record's batch wrote (always, when it recorded none). */
  boolean sameRows(long count, long sum) {
    return rows < 0 || (rows == count && digest == sum);
  }

  /** Whether this record says the batch was committed already by the same query. */
  boolean covers(String query, long batch) {
    return queryId.equals(query) && batchId >= batch;
  }

  static TopicPartition partition(SinkConfig config) {
    return new TopicPartition(config.topic, 0);
  }

  static OffsetAndMetadata offset(SinkConfig config, long rows, long digest) {
    return new OffsetAndMetadata(config.batchId,
        TAG + " " + config.queryId + " " + config.batchId + " " + rows + " " + Long.toHexString(digest));
  }

  /**
   * The committed record of a transactional id, or null when it has none. Called right after the producer's
   * initTransactions(), which completed or aborted whatever an earlier producer of the id left open; the read asks
   * for stable offsets all the same (KIP-447), so a pending transactional offset is never taken for absent.
   */
  static BatchRecord read(Admin admin, String transactionalId, SinkConfig config, long timeoutMs) {
    Map<TopicPartition, OffsetAndMetadata> offsets;
    try {
      offsets = admin
          .listConsumerGroupOffsets(transactionalId, new ListConsumerGroupOffsetsOptions().requireStable(true))
          .partitionsToOffsetAndMetadata()
          .get(timeoutMs, TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new KafkaException("interrupted while reading the batch record of " + transactionalId, e);
    } catch (ExecutionException | TimeoutException e) {
      Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
      throw new KafkaException("cannot read the batch record of transactional id '" + transactionalId + "': " + cause, cause);
    }
    OffsetAndMetadata offset = offsets == null ? null : offsets.get(partition(config));
    if (offset == null) {
      return null;
    }
    String[] parts = offset.metadata() == null ? new String[0] : offset.metadata().split(" ");
    if (parts.length < 3 || !parts[0].equals(TAG)) {
      return null; // an offset some other client committed under this group: not ours
    }
    if (parts.length == 5) {
      return new BatchRecord(parts[1], offset.offset(), Long.parseLong(parts[3]), Long.parseUnsignedLong(parts[4], 16));
    }
    return new BatchRecord(parts[1], offset.offset(), -1, 0);
  }
}
