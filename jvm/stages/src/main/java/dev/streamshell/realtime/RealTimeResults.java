package dev.streamshell.realtime;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeoutException;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.classic.SparkSession;
import org.apache.spark.sql.classic.StreamingQueryManager;
import org.apache.spark.sql.execution.streaming.sources.ContinuousMemorySink;
import org.apache.spark.sql.streaming.OutputMode;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;
import org.apache.spark.sql.types.StructType;

import scala.Option;
import scala.collection.mutable.ArrayBuffer;

/**
 * A SELECT's rows in Spark's real-time mode, taken as they arrive.
 *
 * <p>Why it exists: in real-time mode a batch runs for seconds while each row is computed as it is read, so a
 * foreachBatch function (how a SELECT's micro-batches reach the shell) would see the rows only when the batch ends.
 * The only result sink Spark's real-time mode takes that brings rows to the driver is its memory sink for
 * long-running batches (ContinuousMemorySink: each task sends its rows to the driver as it writes them), and the
 * writer API cannot choose it: {@code format("memory")} gives the micro-batch one, which real-time mode refuses.
 * So the query is started here, through the query manager, with that sink; and the rows are taken out of it
 * under the lock its receiver appends under, so the shell reads each row once and the driver keeps none it has
 * read (a SELECT may run for hours).
 */
public final class RealTimeResults {
    private final ContinuousMemorySink sink = new ContinuousMemorySink();
    private final SparkSession session;
    private final StructType schema;
    private final StreamingQuery query;
    private long dropped;

    private RealTimeResults(org.apache.spark.sql.Dataset<Row> frame, String name, String checkpoint,
                            String batchDuration) throws TimeoutException {
        Dataset<Row> rows = (Dataset<Row>) frame;
        this.session = rows.sparkSession();
        this.schema = rows.schema();
        StreamingQueryManager manager = session.streams();  // (name, sink name, checkpoint, ...): Spark 4.2's order
        this.query = manager.startQuery(Option.apply(name), Option.empty(), Option.apply(checkpoint), rows,
                scala.collection.immutable.Map$.MODULE$.empty(), sink, OutputMode.Update(), false, true,
                Trigger.RealTime(batchDuration), manager.startQuery$default$11(), Option.empty(), Option.empty());
    }

    /** Start `frame` (a streaming query Spark's real-time mode can run) in real-time mode into the driver. */
    public static RealTimeResults start(org.apache.spark.sql.Dataset<Row> frame, String name, String checkpoint,
                                        String batchDuration) throws TimeoutException {
        return new RealTimeResults(frame, name, checkpoint, batchDuration);
    }

    public StreamingQuery query() {
        return query;
    }

    /**
     * Every row that arrived since the last call, taken out of the sink: the first {@code max} of them as a local
     * DataFrame (null when none arrived); the rest are counted in {@link #dropped()}.
     */
    public org.apache.spark.sql.Dataset<Row> take(int max) {
        ArrayBuffer<Row> buffer = sink.org$apache$spark$sql$execution$streaming$sources$ContinuousMemorySink$$batches();
        List<Row> taken;
        synchronized (buffer) {  // the driver's receiver appends under this lock (MemoryRealTimeRpcEndpoint)
            int size = buffer.size();
            if (size == 0) {
                dropped = 0;
                return null;
            }
            int kept = Math.min(max, size);
            taken = new ArrayList<>(kept);
            for (int i = 0; i < kept; i++) {
                taken.add(buffer.apply(i));
            }
            dropped = size - kept;
            buffer.clear();
        }
        return session.createDataFrame(taken, schema);
    }

    /** How many rows the last {@link #take(int)} found beyond its {@code max}. */
    public long dropped() {
        return dropped;
    }
}
