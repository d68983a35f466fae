package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.client.LockHandle;
import io.tenure.client.TenureClient;
import io.tenure.client.fence.InMemoryFenceGuard;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The README's Java example, run as written against a real member. */
class ReadmeExampleTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private final AtomicInteger monthsClosed = new AtomicInteger();

    @Test
    void theReadmeExampleRunsAsWritten() {
        String endpoint = tenure.endpoints().get(0);
        InMemoryFenceGuard seen;
        long token;
        // ---- as in the README, with the member's endpoint ----
        try (TenureClient client = TenureClient.connect(List.of(endpoint))) {
            InMemoryFenceGuard ledger = InMemoryFenceGuard.lenient();   // stands in for your storage's check

            // Wait in the lock's FIFO queue for up to 30 s; the client's session lease holds it.
            try (LockHandle lock = client.lock("invoices/2026-11").acquire(Duration.ofSeconds(30))) {
                // The storage refuses a token lower than the highest it has accepted.
                ledger.write("invoices/2026-11", lock.fencingToken(), () -> closeTheMonth());
                token = lock.fencingToken();
            }   // releases: the next waiter gets the lock, with a larger token
            seen = ledger;
            assertThat(client.describe("invoices/2026-11").held()).isFalse();
        }
        // ----
        assertThat(monthsClosed).hasValue(1);
        assertThat(seen.highestAccepted("invoices/2026-11")).isEqualTo(token);
    }

    private void closeTheMonth() {
        monthsClosed.incrementAndGet();
    }
}
