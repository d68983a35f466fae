package io.tenure.client;

import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Who holds a lock and who waits for it, read linearizably from the cluster
 * ({@link TenureClient#describe(String)}).
 *
 * @param key                 the lock's name
 * @param held                whether anyone holds it; when false, the holder fields are empty or 0
 * @param holder              the holder's client id
 * @param leaseId             the holder's lease
 * @param fencingToken        the token of the current grant; also the revision at which it was acquired
 * @param metadata            what the holder attached when acquiring (never null)
 * @param heldSinceRevision   the revision at which the lock went from free to held (grants to
 *                            waiters since then keep it held)
 * @param grants              grants since then, 1 for the first holder
 * @param holderTtlRemaining  how long the holder's lease has before the serving member could
 *                            expire it, if that member knows (empty right after a restart)
 * @param waiters             the waiting leases in the order they will be granted
 * @param revision            the revision of the state this was read from: watch from
 *                            {@code revision + 1} to see every later change
 */
public record LockDescription(String key, boolean held, String holder, long leaseId, long fencingToken,
                              byte[] metadata, long heldSinceRevision, long grants,
                              Optional<Duration> holderTtlRemaining, List<Waiter> waiters, long revision) {

    public LockDescription {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(holder, "holder");
        metadata = metadata == null ? new byte[0] : metadata.clone();
        Objects.requireNonNull(holderTtlRemaining, "holderTtlRemaining");
        waiters = List.copyOf(waiters);
    }

    /** A copy: the record's array is not handed out. */
    @Override
    public byte[] metadata() {
        return metadata.clone();
    }

    /**
     * A lease waiting for the lock.
     *
     * @param joinedRevision the revision at which it joined the queue
     */
    public record Waiter(long leaseId, String clientId, long joinedRevision) {}

    @Override
    public String toString() {
        if (!held) {
            return "LockDescription{key='" + key + "', free, revision=" + revision + "}";
        }
        return "LockDescription{key='" + key + "', holder='" + holder + "', lease=" + leaseId + ", fencingToken="
                + fencingToken + ", metadata=" + metadata.length + " bytes, heldSince=" + heldSinceRevision
                + ", grants=" + grants + ", holderTtlRemaining=" + holderTtlRemaining.map(Duration::toMillis).map(ms -> ms + "ms").orElse("unknown")
                + ", waiters=" + waiters + ", revision=" + revision + "}";
    }
}
