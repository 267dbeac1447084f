package dev.streamshell.kafka;

import java.time.Duration;
import java.util.Deque;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The transactional producers of one executor JVM, kept between micro-batches: opening one (initTransactions, a
 * round trip to the transaction coordinator that also fences the id's earlier producers) happens once per
 * transactional id and JVM, not once per batch. A producer is handed to one task at a time. A producer whose last
 * transaction did not end cleanly is closed, never given back, so the next task opens a fresh one, which fences and
 * reads the batch record again.
 */
final class ProducerPool {
  private static final Map<String, Deque<Handle>> IDLE = new ConcurrentHashMap<>();
  private static final Map<String, Admin> ADMINS = new ConcurrentHashMap<>();

  private ProducerPool() {}

  /** A producer with its transactional id, and what it knows of the id's batch record. */
  static final class Handle {
    final String poolKey;
    final String transactionalId;
    final KafkaProducer<byte[], byte[]> producer;
    final boolean fresh;
    boolean recordKnown; // once read (fresh producer) or once this producer committed a batch
    BatchRecord record;

    Handle(String poolKey, String transactionalId, KafkaProducer<byte[], byte[]> producer) {
      this.poolKey = poolKey;
      this.transactionalId = transactionalId;
      this.producer = producer;
      this.fresh = true;
    }
  }

  static Handle take(SinkConfig config, int partition) {
    String transactionalId = config.transactionalId(partition);
    String key = transactionalId + "\u0000" + new TreeMap<>(config.clientProperties);
    Handle idle = IDLE.computeIfAbsent(key, k -> new ConcurrentLinkedDeque<>()).pollFirst();
    if (idle != null) {
      return idle;
    }
    Properties properties = new Properties();
    properties.putAll(config.clientProperties);
    properties.remove("isolation.level"); // a consumer's setting (the table's, when it is read too)
    properties.remove("group.id");
    properties.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    properties.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    properties.put(ProducerConfig.ACKS_CONFIG, "all");
    KafkaProducer<byte[], byte[]> producer =
        new KafkaProducer<>(properties, new ByteArraySerializer(), new ByteArraySerializer());
    try {
      producer.initTransactions();
    } catch (RuntimeException e) {
      producer.close(Duration.ZERO);
      throw e;
    }
    return new Handle(key, transactionalId, producer);
  }

  static void giveBack(Handle handle) {
    IDLE.computeIfAbsent(handle.poolKey, k -> new ConcurrentLinkedDeque<>()).addFirst(handle);
  }

  static void discard(Handle handle) {
    try {
      handle.producer.close(Duration.ZERO);
    } catch (RuntimeException ignored) {
      // closing a broken producer may fail too; it is dropped either way
    }
  }

  static Admin admin(SinkConfig config) {
    String key = new TreeMap<>(config.clientProperties).toString();
    return ADMINS.computeIfAbsent(key, k -> {
      Properties properties = new Properties();
      for (Map.Entry<String, String> entry : config.clientProperties.entrySet()) {
        String name = entry.getKey();
        if (name.startsWith("transaction") || name.startsWith("isolation") || name.equals("group.id")) {
          continue; // producer and consumer settings an admin client does not take
        }
        properties.put(name, entry.getValue());
      }
      return Admin.create(properties);
    });
  }
}
