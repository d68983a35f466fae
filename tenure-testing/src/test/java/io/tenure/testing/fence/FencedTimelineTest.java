package io.tenure.testing.fence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.Lease;
import io.tenure.client.LeaseLostException;
import io.tenure.client.LeaseNotFoundException;
import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.client.fence.FenceGuard.Mode;
import io.tenure.client.fence.InMemoryFenceGuard;
import io.tenure.client.fence.JdbcFenceGuard;
import io.tenure.client.fence.StaleTokenException;
import io.tenure.testing.TenureCluster;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The pause-and-stale-write timeline against a real Tenure member, with the fence in memory and
 * in PostgreSQL:
 *
 * <pre>
 *  A acquires "invoices" (token tA) and writes       B waits in lock("invoices")
 *  A pauses: it sends nothing, not even keep-alives
 *  the member expires A's lease (TTL 1 s) ........... B is granted "invoices" (token tB > tA)
 *                                                     B writes with tB: accepted
 *  A wakes and writes with tA: REFUSED; B's invoice stands
 * </pre>
 *
 * A pause is modelled by closing A's own client without releasing anything: its keep-alives stop
 * exactly as a paused process's would, and the lock changes hands only when the member expires
 * A's lease.
 */
class FencedTimelineTest {
    private static final Duration AWAIT = Duration.ofSeconds(30);
    private static final String LOCK = "invoices";

    private final ExecutorService workers = Executors.newCachedThreadPool();

    @AfterEach
    void tearDown() throws InterruptedException {
        workers.shutdownNow();
        assertThat(workers.awaitTermination(AWAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    }

    @Test
    void aPausedHolderWakesUpAndIsRefusedInMemory() throws Exception {
        InMemoryFenceGuard guard = InMemoryFenceGuard.lenient();
        AtomicReference<String> invoice = new AtomicReference<>("none");

        timeline(new InvoiceStore() {
            @Override
            public void write(String body, long token) {
                guard.write(LOCK, token, () -> invoice.set(body));
            }

            @Override
            public String read() {
                return invoice.get() + " @" + guard.highestAccepted(LOCK);
            }
        });
    }

    @Test
    void aPausedHolderWakesUpAndIsRefusedByPostgres() throws Exception {
        PostgresServer postgres = PostgresServer.get();
        String suffix = UUID.randomUUID().toString().replace("-", "");
        JdbcFenceGuard fence = JdbcFenceGuard.of("fence_" + suffix, Mode.AT_LEAST);
        String invoices = "invoices_" + suffix;
        try (Connection admin = postgres.connect(); Statement ddl = admin.createStatement()) {
            fence.createTable(admin);
            ddl.execute("CREATE TABLE " + invoices + " (id INT PRIMARY KEY, body TEXT NOT NULL)");
            ddl.execute("INSERT INTO " + invoices + " VALUES (1, 'none')");
        }
        try {
            timeline(new InvoiceStore() {
                /** The application's write: the fence check and the row update commit or roll back together. */
                @Override
                public void write(String body, long token) throws SQLException {
                    try (Connection tx = postgres.transaction()) {
                        try {
                            fence.check(tx, LOCK, token);
                            try (PreparedStatement update = tx.prepareStatement("UPDATE " + invoices + " SET body = ? WHERE id = 1")) {
                                update.setString(1, body);
                                assertThat(update.executeUpdate()).isEqualTo(1);
                            }
                            tx.commit();
                        } catch (SQLException | RuntimeException e) {
                            tx.rollback();
                            throw e;
                        }
                    }
                }

                @Override
                public String read() throws SQLException {
                    try (Connection connection = postgres.connect(); Statement select = connection.createStatement();
                         ResultSet row = select.executeQuery("SELECT body FROM " + invoices + " WHERE id = 1")) {
                        assertThat(row.next()).isTrue();
                        return row.getString(1) + " @" + fence.highestAccepted(connection, LOCK);
                    }
                }
            });
        } finally {
            try (Connection admin = postgres.connect(); Statement ddl = admin.createStatement()) {
                ddl.execute("DROP TABLE IF EXISTS " + invoices + ", " + fence.table());
            }
        }
    }

    private void timeline(InvoiceStore store) throws Exception {
        try (TenureCluster tenure = TenureCluster.start(1)) {
            TenureClient workerA = tenure.newClient();
            TenureClient workerB = tenure.newClient();
            // The first call of a client opens its channel; keep that out of A's one-second lease.
            workerA.status();
            workerB.status();

            LockHandle lockA = lockUnderShortLease(workerA, tenure.minTtl()); // 1 s on a single member
            long tokenA = lockA.fencingToken();
            store.write("A's draft", tokenA);
            assertThat(store.read()).isEqualTo("A's draft @" + tokenA);

            Lease leaseB = workerB.grantLease(AWAIT, "worker-b");
            CompletableFuture<LockHandle> waitingB = CompletableFuture.supplyAsync(
                    () -> workerB.acquire(LOCK, leaseB, null, null), workers);

            // A pauses: from now on it sends nothing, so its keep-alives stop; it releases nothing.
            workerA.close();

            LockHandle lockB = waitingB.get(AWAIT.toSeconds(), TimeUnit.SECONDS);
            long tokenB = lockB.fencingToken();
            assertThat(tokenB).isGreaterThan(tokenA);
            store.write("B's final", tokenB);

            // A wakes up, still believing it holds the lock, and writes with its old token.
            assertThatThrownBy(() -> store.write("A's stale draft", tokenA))
                    .isInstanceOfSatisfying(StaleTokenException.class, stale -> {
                        assertThat(stale.resource()).isEqualTo(LOCK);
                        assertThat(stale.offeredToken()).isEqualTo(tokenA);
                        assertThat(stale.highestAccepted()).isEqualTo(tokenB);
                    })
                    .hasMessageContaining(Long.toString(tokenA)).hasMessageContaining(Long.toString(tokenB));
            assertThat(store.read()).isEqualTo("B's final @" + tokenB);

            // B goes on writing under its grant.
            store.write("B's final, amended", tokenB);
            assertThat(store.read()).isEqualTo("B's final, amended @" + tokenB);
            lockB.release();
        }
    }

    /**
     * A's lock, held by a lease of {@code ttl}. The client gives a lease up a safe window (5/6 of a one-second TTL) after sending its
     * grant unless a renewal is acknowledged, so on a loaded machine a one-second lease can be
     * lost before the lock call is even sent; A then starts over with a new lease, as a real
     * worker would. Other failures, and a fifth loss in a row, fail the test.
     */
    private static LockHandle lockUnderShortLease(TenureClient client, Duration ttl) {
        for (int attempt = 1; ; attempt++) {
            Lease lease = client.grantLease(ttl, "worker-a");
            try {
                return client.acquire(LOCK, lease, Duration.ZERO, null);
            } catch (LeaseLostException | LeaseNotFoundException lost) {
                if (attempt == 5) {
                    throw lost;
                }
                lease.close();
            }
        }
    }

    /** The guarded resource of the timeline: one invoice, and the highest token its fence accepted. */
    private interface InvoiceStore {
        void write(String body, long token) throws Exception;

        /** The invoice's body and the fence's highest token, as {@code body @token}. */
        String read() throws Exception;
    }
}
