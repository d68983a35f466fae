package io.tenure.bench.peers.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.Lock;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import io.etcd.jetcd.support.CloseableClient;
import io.grpc.stub.StreamObserver;
import io.tenure.bench.peers.CounterTarget;
import io.tenure.bench.peers.KeepAliveTarget;
import io.tenure.bench.peers.KvTarget;
import io.tenure.bench.peers.Options;
import io.tenure.bench.peers.PeerBench;
import io.tenure.bench.peers.PeerTarget;
import io.tenure.bench.peers.Versions;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * etcd through jetcd's Lock API (the server-side v3lock recipe: a key under the lock name bound to
 * the caller's lease, then a wait for every earlier key's deletion). Each benchmark client is one
 * lock owner with its own lease, kept alive for the run, as an etcd {@code concurrency.Session}
 * would; all clients share one jetcd client (one gRPC channel).
 *
 * <p>Given several endpoints ({@code --endpoint a:p,b:q,c:r}, the members of one cluster), the jetcd
 * client is built with all of them and spreads its calls over them; the JSON line's target is then
 * {@code etcd-N} (or {@code --target}).
 *
 * <p>No W6: jetcd's concurrency package has a lock and an election but no semaphore, so this driver
 * is no {@link io.tenure.bench.peers.SemaphoreTarget} and answers {@code --workload W6} with a usage
 * error; run-peers.sh skips W6 on etcd.
 *
 * <p>No W7 either: jetcd has no read/write lock (its concurrency package's lock is exclusive), so
 * this driver is no {@link io.tenure.bench.peers.ReadWriteLockTarget} and answers
 * {@code --workload W7} with a usage error; run-peers.sh skips W7 on etcd.
 *
 * <p>W8: etcd has no increment; the counter is a key holding a decimal value, incremented as
 * etcd's own STM does: read the key and its mod revision, then a {@code Txn} that writes the value
 * plus one only if the mod revision is unchanged, retried at once until it succeeds.
 *
 * <p>W9: a KV {@code Put}, then a KV {@code Get} with {@code serializable=false}, etcd's
 * linearizable read (through the leader's read index); the put's stamp is the revision of its
 * response header, the get's the key's mod revision.
 *
 * <p>No W10: etcd has no queue (jetcd has no queue recipe, and etcd's own recipes in Go build one
 * from keys, watches and transactions), so this driver is no {@link io.tenure.bench.peers.QueueTarget}
 * and answers {@code --workload W10} with a usage error; run-peers.sh skips W10 on etcd.
 */
public final class EtcdPeer implements PeerTarget, KeepAliveTarget, CounterTarget, KvTarget {

    /** Lease TTL of each client's session; long enough that a loaded machine never loses one. */
    private static final long SESSION_TTL_SECONDS = 30;
    private static final long CALL_TIMEOUT_SECONDS = 60;

    private final Client client;
    private final String name;
    private final int members;

    private EtcdPeer(Options options) {
        this.client = Client.builder()
                .endpoints(options.endpoints().stream().map(e -> "http://" + e).toArray(String[]::new))
                .build();
        this.name = options.target("etcd");
        this.members = options.endpoints().size();
    }

    public static void main(String[] args) {
        PeerBench.main(args, 2379, EtcdPeer::new);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Locker locker(int index) throws Exception {
        Lease leases = client.getLeaseClient();
        long leaseId = leases.grant(SESSION_TTL_SECONDS).get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS).getID();
        CloseableClient keepAlive = leases.keepAlive(leaseId, new StreamObserver<LeaseKeepAliveResponse>() {
            @Override public void onNext(LeaseKeepAliveResponse value) {}
            @Override public void onError(Throwable t) {
                System.err.println("etcd keep-alive of lease " + leaseId + " failed: " + t);
            }
            @Override public void onCompleted() {}
        });
        Lock locks = client.getLockClient();
        return new Locker() {
            @Override
            public Held lock(String key) throws Exception {
                ByteSequence owned = locks.lock(ByteSequence.from(key, StandardCharsets.UTF_8), leaseId)
                        .get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS).getKey();
                return () -> locks.unlock(owned).get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            }

            @Override
            public void close() throws Exception {
                keepAlive.close();
                leases.revoke(leaseId).get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            }
        };
    }

    @Override
    public int runKeepAlives(Options options) throws Exception {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("client", "jetcd-core " + Versions.of("io.etcd", "jetcd-core", Client.class));
        d.put("recipe", "Lease API: jetcd keepAlive per lease (one stream, renewal about every TTL/3)");
        if (members > 1) {
            d.put("endpoints", members);
        }
        return EtcdKeepAlives.run(client, options, d);
    }

    @Override
    public void resetCounter(String name) throws Exception {
        client.getKVClient().put(bytes(name), bytes("0")).get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    }

    @Override
    public Incrementer incrementer(int index, String name) {
        io.etcd.jetcd.KV kv = client.getKVClient();
        ByteSequence key = bytes(name);
        return new Incrementer() {
            long attempts;

            @Override
            public long increment() throws Exception {
                while (true) {
                    attempts++;
                    var read = kv.get(key).get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    long value = read.getKvs().isEmpty() ? 0 : Long.parseLong(read.getKvs().get(0).getValue().toString(StandardCharsets.UTF_8));
                    long revision = read.getKvs().isEmpty() ? 0 : read.getKvs().get(0).getModRevision();
                    var written = kv.txn()
                            .If(new io.etcd.jetcd.op.Cmp(key, io.etcd.jetcd.op.Cmp.Op.EQUAL, io.etcd.jetcd.op.CmpTarget.modRevision(revision)))
                            .Then(io.etcd.jetcd.op.Op.put(key, bytes(Long.toString(value + 1)), io.etcd.jetcd.options.PutOption.DEFAULT))
                            .commit().get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                    if (written.isSucceeded()) {
                        return value + 1;
                    }
                }
            }

            @Override
            public long attempts() {
                return attempts;
            }
        };
    }

    @Override
    public long counterValue(String name) throws Exception {
        var read = client.getKVClient().get(bytes(name)).get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        return read.getKvs().isEmpty() ? 0 : Long.parseLong(read.getKvs().get(0).getValue().toString(StandardCharsets.UTF_8));
    }

    @Override
    public String counterRecipe() {
        return "get + Txn(if mod_revision unchanged then put value+1), retried until it succeeds";
    }

    @Override
    public KvClient kv(int index) {
        io.etcd.jetcd.KV kv = client.getKVClient();
        io.etcd.jetcd.options.GetOption linearizable = io.etcd.jetcd.options.GetOption.builder().withSerializable(false).build();
        return new KvClient() {
            @Override
            public long put(String key, byte[] value) throws Exception {
                return kv.put(bytes(key), ByteSequence.from(value)).get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS).getHeader().getRevision();
            }

            @Override
            public Read get(String key) throws Exception {
                var read = kv.get(bytes(key), linearizable).get(CALL_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                return read.getKvs().isEmpty() ? null
                        : new Read(read.getKvs().get(0).getValue().getBytes(), read.getKvs().get(0).getModRevision());
            }
        };
    }

    @Override
    public String kvRecipe() {
        return "KV Put, then KV Get with serializable=false (linearizable)";
    }

    private static ByteSequence bytes(String text) {
        return ByteSequence.from(text, StandardCharsets.UTF_8);
    }

    @Override
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("client", "jetcd-core " + Versions.of("io.etcd", "jetcd-core", Client.class));
        d.put("recipe", "Lock API (v3lock) with one lease per client, TTL " + SESSION_TTL_SECONDS + " s");
        d.put("connection", members == 1 ? "one jetcd client shared by all clients"
                : "one jetcd client shared by all clients, over the " + members + " members' endpoints");
        if (members > 1) {
            d.put("endpoints", members);
        }
        return d;
    }

    @Override
    public void close() {
        client.close();
    }
}
