package io.tenure.bench.peers.etcd;

import io.etcd.jetcd.Client;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import io.tenure.bench.peers.Options;
import io.tenure.bench.peers.PeerBench;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import org.HdrHistogram.Recorder;

/**
 * W3 for etcd: {@code --leases N} leases at {@code --ttl}, kept alive by jetcd's own keep-alive
 * machinery (one bidirectional stream, each lease renewed about every TTL/3), as an application
 * holding N sessions would. Needed rate: N / (TTL/3) keep-alives/s.
 *
 * <p>{@code ops} are keep-alive responses inside the window; the latency fields are the gap
 * between two consecutive renewals of one lease (a lease is lost when a gap exceeds its TTL).
 * jetcd exposes no per-request latency, so the gap is what can be measured from outside.
 * {@code lost} counts our leases the server no longer lists at the end of the window.
 */
final class EtcdKeepAlives {

    private static final int GRANTS_IN_FLIGHT = 256;
    private static final long HIGHEST_NANOS = TimeUnit.MINUTES.toNanos(2);

    private EtcdKeepAlives() {}

    static int run(Client client, Options options, Map<String, Object> describe) throws Exception {
        int n = options.leases();
        long ttlSeconds = Math.max(1, options.ttl().toSeconds());
        Lease leases = client.getLeaseClient();

        long[] ids = new long[n];
        AtomicLong grantErrors = new AtomicLong();
        AtomicLongArray lastRenewal = new AtomicLongArray(n);
        // The measured window, known only once every lease is granted; until then nothing is recorded.
        AtomicLongArray window = new AtomicLongArray(new long[] {Long.MAX_VALUE, Long.MAX_VALUE});
        Recorder gaps = new Recorder(HIGHEST_NANOS, 3);
        AtomicLong renewals = new AtomicLong();
        AtomicLong keepAliveErrors = new AtomicLong();
        List<CloseableClient> streams = Collections.synchronizedList(new ArrayList<>(n));
        Semaphore inFlight = new Semaphore(GRANTS_IN_FLIGHT);
        long grantStart = System.nanoTime();
        for (int i = 0; i < n; i++) {
            int lease = i;
            inFlight.acquire();
            leases.grant(ttlSeconds).whenComplete((r, e) -> {
                if (e != null) {
                    grantErrors.incrementAndGet();
                    inFlight.release();
                    return;
                }
                ids[lease] = r.getID();
                lastRenewal.set(lease, System.nanoTime());
                // Kept alive from its grant on: granting 10,000 leases can take longer than one TTL.
                streams.add(leases.keepAlive(r.getID(), new StreamObserver<LeaseKeepAliveResponse>() {
                    @Override
                    public void onNext(LeaseKeepAliveResponse response) {
                        long now = System.nanoTime();
                        long previous = lastRenewal.getAndSet(lease, now);
                        if (now >= window.get(0) && now < window.get(1)) {
                            renewals.incrementAndGet();
                            gaps.recordValue(Math.min(now - previous, HIGHEST_NANOS));
                        }
                    }

                    @Override
                    public void onError(Throwable t) {
                        // jetcd stops keeping a lease alive after an error: the first few say why it was lost.
                        if (keepAliveErrors.incrementAndGet() <= 5) {
                            System.err.println("keep-alive of lease " + lease + " failed: " + t);
                        }
                    }

                    @Override
                    public void onCompleted() {}
                }));
                inFlight.release();
            });
        }
        inFlight.acquire(GRANTS_IN_FLIGHT); // every grant has answered
        inFlight.release(GRANTS_IN_FLIGHT);
        double grantSeconds = (System.nanoTime() - grantStart) / 1e9;

        long from = System.nanoTime() + options.warmup().toNanos();
        long until = from + options.duration().toNanos();
        window.set(1, until);
        window.set(0, from);

        // The run is the wait: the keep-alives happen on jetcd's threads.
        long left;
        while ((left = until - System.nanoTime()) > 0) {
            TimeUnit.NANOSECONDS.sleep(Math.min(left, TimeUnit.SECONDS.toNanos(1)));
        }
        // Which of our leases the server still has (TTL -1 once expired or revoked).
        AtomicLong lostCount = new AtomicLong();
        long granted = 0;
        for (long id : ids) {
            if (id == 0) {
                continue;
            }
            granted++;
            inFlight.acquire();
            leases.timeToLive(id, LeaseOption.DEFAULT).whenComplete((r, e) -> {
                if (e != null || r.getTTL() <= 0) {
                    lostCount.incrementAndGet();
                }
                inFlight.release();
            });
        }
        inFlight.acquire(GRANTS_IN_FLIGHT);
        long lost = lostCount.get();
        synchronized (streams) {
            for (CloseableClient stream : streams) {
                stream.close();
            }
        }

        org.HdrHistogram.Histogram gap = gaps.getIntervalHistogram();
        double seconds = options.duration().toNanos() / 1e9;
        Map<String, Object> extra = new LinkedHashMap<>(describe);
        extra.put("leases", n);
        extra.put("ttl_s", ttlSeconds);
        extra.put("needed_per_sec", Math.round(n / (ttlSeconds / 3.0)));
        extra.put("lost", lost);
        extra.put("latency_fields", "gap between two renewals of one lease");
        extra.put("grant_s", Math.round(grantSeconds * 100) / 100.0);
        extra.put("grant_errors", grantErrors.get());
        extra.put("keepalive_errors", keepAliveErrors.get());
        extra.put("warmup_s", options.warmup().toNanos() / 1e9);

        Map<String, Object> line = new LinkedHashMap<>();
        line.put("target", options.target("etcd"));
        line.put("workload", "W3");
        line.put("clients", 1);
        line.put("seconds", seconds);
        line.put("ops", renewals.get());
        line.put("ops_per_sec", Math.round(renewals.get() / seconds * 10) / 10.0);
        line.put("p50_ms", PeerBench.ms(gap.getValueAtPercentile(50)));
        line.put("p99_ms", PeerBench.ms(gap.getValueAtPercentile(99)));
        line.put("max_ms", PeerBench.ms(gap.getMaxValue()));
        line.put("overlaps", 0);
        line.put("extra", extra);
        PeerBench.printLine(line);
        return lost == 0 && grantErrors.get() == 0 && granted == n ? 0 : 1;
    }
}
