package io.tenure.bench.peers.zookeeper;

import io.tenure.bench.peers.CounterTarget;
import io.tenure.bench.peers.KvTarget;
import io.tenure.bench.peers.Options;
import io.tenure.bench.peers.PeerBench;
import io.tenure.bench.peers.PeerTarget;
import io.tenure.bench.peers.QueueTarget;
import io.tenure.bench.peers.ReadWriteLockTarget;
import io.tenure.bench.peers.SemaphoreTarget;
import io.tenure.bench.peers.Versions;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.queue.DistributedQueue;
import org.apache.curator.framework.recipes.queue.QueueBuilder;
import org.apache.curator.framework.recipes.queue.QueueConsumer;
import org.apache.curator.framework.recipes.queue.QueueSerializer;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

/**
 * ZooKeeper through Curator's {@link InterProcessMutex} (an ephemeral sequential node per
 * acquisition, each waiter watching only its predecessor). Each benchmark client owns its own
 * mutex instances; all clients share one Curator client, so one ZooKeeper session.
 *
 * <p>W6 uses Curator's {@link InterProcessSemaphoreV2}: one instance per client and semaphore,
 * each with the same limit; {@code acquire()} creates the client's own lease node (once the
 * recipe's internal mutex lets it count the leases) and {@code returnLease} deletes it.
 *
 * <p>W7 uses Curator's {@link InterProcessReadWriteLock}: one instance per client and name, whose
 * {@code readLock()} and {@code writeLock()} are mutexes over one directory of sequential nodes. A
 * writer is granted when its node is the first; a reader when no writer's node comes before its
 * own, so readers queue behind earlier writers (no reader overtakes a waiting writer), and the
 * readers waiting on a writer all watch that writer's node.
 *
 * <p>W9: {@code setData} of the key's node (created, with its parents, at its first put), then a
 * linearizable read as ZooKeeper offers one: {@code sync} of the path (the server catches up with
 * the leader), then {@code getData}. The stamps are the node's data version.
 *
 * <p>W10 uses Curator's {@link DistributedQueue} (one per producer and per consumer, each started
 * on the same path): {@code put} (a persistent sequential node; in the foreground, so it returns
 * once written) and, for each consumer, a {@link QueueConsumer} handed each item the recipe took
 * (it deletes the node, then hands it over), which the consumer's poll takes from its own
 * in-process buffer. The recipe's consumers each read the queue's children and race to delete
 * them; Curator's documentation warns it is not suited to large queues.
 *
 * <p>Given several endpoints ({@code --endpoint a:p,b:q,c:r}, the servers of one ensemble), the
 * connect string lists them all (the session lives on one of them, chosen by the ZooKeeper client);
 * the JSON line's target is then {@code zookeeper-N} (or {@code --target}).
 */
public final class ZooKeeperPeer implements PeerTarget, SemaphoreTarget, ReadWriteLockTarget, CounterTarget, KvTarget, QueueTarget {

    private static final int SESSION_TIMEOUT_MS = 30_000;
    private static final int CONNECT_TIMEOUT_SECONDS = 30;

    private final CuratorFramework curator;
    private final String name;
    private final int members;

    private ZooKeeperPeer(Options options) throws InterruptedException {
        name = options.target("zookeeper");
        members = options.endpoints().size();
        String connect = String.join(",", options.endpoints());
        curator = CuratorFrameworkFactory.builder()
                .connectString(connect)
                .sessionTimeoutMs(SESSION_TIMEOUT_MS)
                .retryPolicy(new ExponentialBackoffRetry(100, 5))
                .build();
        curator.start();
        if (!curator.blockUntilConnected(CONNECT_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            curator.close();
            throw new IllegalStateException("ZooKeeper at " + connect
                    + " did not answer within " + CONNECT_TIMEOUT_SECONDS + " s");
        }
    }

    public static void main(String[] args) {
        PeerBench.main(args, 2181, ZooKeeperPeer::new);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public Locker locker(int index) {
        Map<String, InterProcessMutex> mutexes = new HashMap<>();
        return key -> {
            InterProcessMutex mutex = mutexes.computeIfAbsent(key, k -> new InterProcessMutex(curator, "/" + k));
            mutex.acquire();
            return mutex::release;
        };
    }

    @Override
    public Locker permits(int index, int limit) {
        Map<String, InterProcessSemaphoreV2> semaphores = new HashMap<>();
        return name -> {
            InterProcessSemaphoreV2 semaphore = semaphores.computeIfAbsent(name,
                    k -> new InterProcessSemaphoreV2(curator, "/" + k, limit));
            Lease lease = semaphore.acquire();
            return () -> semaphore.returnLease(lease);
        };
    }

    /**
     * W8: Curator's {@code DistributedAtomicLong} in its optimistic mode (read the node and its
     * version, write it back at that version), one attempt per call, retried here at once until it
     * wins the race, so every attempt is counted.
     */
    @Override
    public void resetCounter(String name) throws Exception {
        new org.apache.curator.framework.recipes.atomic.DistributedAtomicLong(curator, "/" + name,
                new org.apache.curator.retry.RetryNTimes(0, 0)).forceSet(0L);
    }

    @Override
    public Incrementer incrementer(int client, String name) {
        var counter = new org.apache.curator.framework.recipes.atomic.DistributedAtomicLong(curator, "/" + name,
                new org.apache.curator.retry.RetryNTimes(0, 0));
        return new Incrementer() {
            long attempts;

            @Override
            public long increment() throws Exception {
                while (true) {
                    attempts++;
                    org.apache.curator.framework.recipes.atomic.AtomicValue<Long> done = counter.increment();
                    if (done.succeeded()) {
                        return done.postValue();
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
        return new org.apache.curator.framework.recipes.atomic.DistributedAtomicLong(curator, "/" + name,
                new org.apache.curator.retry.RetryNTimes(0, 0)).get().postValue();
    }

    @Override
    public String counterRecipe() {
        return "DistributedAtomicLong.increment(), optimistic (versioned setData), retried until it wins";
    }

    @Override
    public String semaphoreRecipe() {
        return "InterProcessSemaphoreV2, acquire() and returnLease, one instance per client";
    }

    @Override
    public Owner readWrite(int index) {
        Map<String, InterProcessReadWriteLock> locks = new HashMap<>();
        Locker reader = name -> {
            InterProcessMutex read = locks.computeIfAbsent(name, this::readWriteLock).readLock();
            read.acquire();
            return read::release;
        };
        Locker writer = name -> {
            InterProcessMutex write = locks.computeIfAbsent(name, this::readWriteLock).writeLock();
            write.acquire();
            return write::release;
        };
        return new Owner() {
            @Override
            public Locker reader() {
                return reader;
            }

            @Override
            public Locker writer() {
                return writer;
            }
        };
    }

    private InterProcessReadWriteLock readWriteLock(String name) {
        return new InterProcessReadWriteLock(curator, "/" + name);
    }

    @Override
    public String readWriteRecipe() {
        return "InterProcessReadWriteLock, readLock()/writeLock() acquire() and release(), one instance per client";
    }

    @Override
    public KvClient kv(int client) {
        return new KvClient() {
            @Override
            public long put(String key, byte[] value) throws Exception {
                try {
                    return curator.setData().forPath("/" + key, value).getVersion();
                } catch (KeeperException.NoNodeException first) {
                    curator.create().creatingParentsIfNeeded().forPath("/" + key, value);
                    return 0;
                }
            }

            @Override
            public Read get(String key) throws Exception {
                CompletableFuture<Integer> synced = new CompletableFuture<>();
                curator.getZookeeperClient().getZooKeeper().sync("/" + key, (rc, path, context) -> synced.complete(rc), null);
                int rc = synced.get(CONNECT_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                if (rc != KeeperException.Code.OK.intValue()) {
                    throw KeeperException.create(KeeperException.Code.get(rc), "/" + key);
                }
                Stat stat = new Stat();
                try {
                    return new Read(curator.getData().storingStatIn(stat).forPath("/" + key), stat.getVersion());
                } catch (KeeperException.NoNodeException absent) {
                    return null;
                }
            }
        };
    }

    @Override
    public String kvRecipe() {
        return "setData, then sync + getData (ZooKeeper's linearizable read)";
    }

    private static final QueueSerializer<byte[]> BYTES = new QueueSerializer<>() {
        @Override
        public byte[] serialize(byte[] item) {
            return item;
        }

        @Override
        public byte[] deserialize(byte[] bytes) {
            return bytes;
        }
    };

    @Override
    public void resetQueue(String name) throws Exception {
        if (curator.checkExists().forPath("/" + name) != null) {
            curator.delete().deletingChildrenIfNeeded().forPath("/" + name);
        }
    }

    @Override
    public Producer producer(int client, String name) throws Exception {
        DistributedQueue<byte[]> queue = QueueBuilder.builder(curator, null, BYTES, "/" + name).putInBackground(false).buildQueue();
        queue.start();
        return queue::put;
    }

    @Override
    public Consumer consumer(int client, String name) throws Exception {
        LinkedBlockingQueue<byte[]> taken = new LinkedBlockingQueue<>();
        QueueConsumer<byte[]> handed = new QueueConsumer<>() {
            @Override
            public void consumeMessage(byte[] item) {
                taken.add(item);
            }

            @Override
            public void stateChanged(CuratorFramework client, ConnectionState state) {
            }
        };
        DistributedQueue<byte[]> queue = QueueBuilder.builder(curator, handed, BYTES, "/" + name).buildQueue();
        queue.start();
        return new Consumer() {
            @Override
            public byte[] poll(long timeoutMs) throws InterruptedException {
                return taken.poll(timeoutMs, TimeUnit.MILLISECONDS);
            }

            @Override
            public void close() throws Exception {
                queue.close();
            }
        };
    }

    @Override
    public String queueRecipe() {
        return "DistributedQueue put (foreground) and a QueueConsumer per consumer, one instance each";
    }

    @Override
    public Map<String, Object> describe() {
        Map<String, Object> d = new LinkedHashMap<>();
        d.put("client", "curator-recipes " + Versions.of("org.apache.curator", "curator-recipes", InterProcessMutex.class)
                + ", zookeeper client " + Versions.of("org.apache.zookeeper", "zookeeper", org.apache.zookeeper.ZooKeeper.class));
        d.put("recipe", "InterProcessMutex");
        d.put("connection", "one Curator client (one session) shared by all clients");
        if (members > 1) {
            d.put("endpoints", members);
        }
        return d;
    }

    @Override
    public void close() {
        curator.close();
    }
}
