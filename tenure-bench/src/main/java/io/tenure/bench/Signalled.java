package io.tenure.bench;

import io.tenure.client.SignalListener;
import io.tenure.client.Subscription;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureTopic;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;

/**
 * W11: every client publishes on one channel in a loop ({@code publish}, the next once the last is
 * answered), and one listener per member (its client prefers that member) receives them; one op
 * is an acknowledged publish. The payload carries the publisher, its sequence number and the
 * time it was sent, so each listener checks that it receives each publisher's signals once and in
 * order ({@code duplicates} counts any seen twice or out of order), and measures the delivery
 * latency from the publish to its arrival (same process, same clock). At the end every listener
 * must have received every acknowledged publish ({@code lost}: the largest shortfall).
 */
final class Signalled {
    static final String CHANNEL = "bench.w11";

    private Signalled() {
    }

    /** One listener: what it received from each publisher, and its delivery latencies. */
    private static final class Receiver implements SignalListener {
        final long[] lastSeq;
        final Histogram delivery = Latencies.histogram();
        final Window window;
        long received;
        long disorder;

        Receiver(int publishers, Window window) {
            this.lastSeq = new long[publishers];
            this.window = window;
        }

        @Override
        public synchronized void onSignal(String channel, byte[] payload) {
            long arrived = System.nanoTime();
            ByteBuffer b = ByteBuffer.wrap(payload);
            int publisher = b.getInt();
            long seq = b.getLong();
            long sent = b.getLong();
            if (seq != lastSeq[publisher] + 1) {
                disorder++;
            }
            lastSeq[publisher] = Math.max(lastSeq[publisher], seq);
            received++;
            if (window.counts(sent, arrived)) {
                Latencies.recordNanos(delivery, arrived - sent);
            }
        }
    }

    static BenchResult run(Members members, BenchSettings s) throws Exception {
        List<String> endpoints = members.endpoints();
        List<TenureClient> listenerClients = new ArrayList<>();
        List<Subscription> subscriptions = new ArrayList<>();
        try (SdkClients sdks = new SdkClients(members, s.clients(), "bench-w11", s.unaryLockCalls())) {
            Window window = new Window(s.warmup(), s.duration());
            List<Receiver> receivers = new ArrayList<>();
            for (int m = 0; m < endpoints.size(); m++) {
                List<String> preferring = new ArrayList<>();
                for (int i = 0; i < endpoints.size(); i++) {
                    preferring.add(endpoints.get((m + i) % endpoints.size()));
                }
                TenureClient client = members.client(preferring).clientId("bench-w11-listener-" + m).build();
                listenerClients.add(client);
                Receiver r = new Receiver(s.clients(), window);
                receivers.add(r);
                Subscription sub = client.topic().listen(CHANNEL, r);
                sub.started().get(30, TimeUnit.SECONDS);
                subscriptions.add(sub);
            }
            CpuMeter cpu = CpuMeter.during(members, window);
            Histogram[] latencies = new Histogram[s.clients()];
            long[] ops = new long[s.clients()];
            AtomicLong acknowledged = new AtomicLong();
            AtomicLong wrongCount = new AtomicLong();
            AtomicReference<Throwable> failure = new AtomicReference<>();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < s.clients(); i++) {
                int client = i;
                latencies[i] = Latencies.histogram();
                Thread thread = new Thread(() -> {
                    TenureTopic topic = sdks.get(client).topic();
                    long seq = 0;
                    try {
                        while (!window.over(System.nanoTime()) && failure.get() == null) {
                            long began = System.nanoTime();
                            byte[] payload = ByteBuffer.allocate(20).putInt(client).putLong(++seq).putLong(began).array();
                            int heard = topic.publish(CHANNEL, payload);
                            long ended = System.nanoTime();
                            acknowledged.incrementAndGet();
                            if (heard != receivers.size()) {
                                wrongCount.incrementAndGet();
                            }
                            if (window.counts(began, ended)) {
                                Latencies.recordNanos(latencies[client], ended - began);
                                ops[client]++;
                            }
                        }
                    } catch (Throwable t) {
                        failure.compareAndSet(null, t);
                    }
                }, "bench-w11-" + i);
                thread.start();
                threads.add(thread);
            }
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new IllegalStateException("W11 client failed: " + failure.get(), failure.get());
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline && receivers.stream().anyMatch(r -> received(r) < acknowledged.get())) {
                Thread.sleep(10); // polling the receivers' counts while the last signals arrive
            }
            Histogram all = Latencies.histogram();
            Histogram delivery = Latencies.histogram();
            long total = 0;
            for (int i = 0; i < s.clients(); i++) {
                all.add(latencies[i]);
                total += ops[i];
            }
            long lost = 0;
            long disorder = 0;
            for (Receiver r : receivers) {
                synchronized (r) {
                    delivery.add(r.delivery);
                    lost = Math.max(lost, acknowledged.get() - r.received);
                    disorder += r.disorder;
                }
            }
            Map<String, Object> x = new LinkedHashMap<>();
            x.put("listeners", receivers.size());
            x.put("acknowledged", acknowledged.get());
            x.put("wrong_receiver_count", wrongCount.get());
            x.put("duplicates", disorder);
            x.put("lost", Math.abs(lost));
            x.put("delivery_p50_ms", Latencies.ms(delivery, 50));
            x.put("delivery_p99_ms", Latencies.ms(delivery, 99));
            cpu.report(total, window.seconds(), x);
            return new BenchResult(s.label(), s.workload(), s.clients(), window.seconds(), total, total / window.seconds(),
                    Latencies.ms(all, 50), Latencies.ms(all, 99), Latencies.maxMs(all), disorder + wrongCount.get(), x);
        } finally {
            subscriptions.forEach(Subscription::close);
            listenerClients.forEach(TenureClient::close);
        }
    }

    private static long received(Receiver r) {
        synchronized (r) {
            return r.received;
        }
    }
}
