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
 * @param mode                how it is held: by one writer, or by readers
 * @param holders             every holder in grant order (one in write mode); {@code holder},
 *                            {@code leaseId}, {@code fencingToken}, {@code metadata} and
 *                            {@code holderTtlRemaining} above are the first one's
 */
public record LockDescription(String key, boolean held, String holder, long leaseId, long fencingToken,
                              byte[] metadata, long heldSinceRevision, long grants,
                              Optional<Duration> holderTtlRemaining, List<Waiter> waiters, long revision,
                              LockMode mode, List<Holder> holders) {

    public LockDescription {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(holder, "holder");
        metadata = metadata == null ? new byte[0] : metadata.clone();
        Objects.requireNonNull(holderTtlRemaining, "holderTtlRemaining");
        waiters = List.copyOf(waiters);
        Objects.requireNonNull(mode, "mode");
        holders = List.copyOf(holders);
    }

    /** A description of a lock held in write mode, by its one holder if {@code held} (as before read mode). */
    public LockDescription(String key, boolean held, String holder, long leaseId, long fencingToken,
                           byte[] metadata, long heldSinceRevision, long grants,
                           Optional<Duration> holderTtlRemaining, List<Waiter> waiters, long revision) {
        this(key, held, holder, leaseId, fencingToken, metadata, heldSinceRevision, grants, holderTtlRemaining, waiters, revision,
                LockMode.WRITE, held ? List.of(new Holder(leaseId, holder, fencingToken, metadata, holderTtlRemaining)) : List.of());
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
    public record Waiter(long leaseId, String clientId, long joinedRevision, LockMode mode) {

        /** A waiter for the write mode. */
        public Waiter(long leaseId, String clientId, long joinedRevision) {
            this(leaseId, clientId, joinedRevision, LockMode.WRITE);
        }
    }

    /**
     * A lease holding the lock.
     *
     * @param ttlRemaining how long its lease has before the serving member could expire it, if
     *                     that member knows
     */
    public record Holder(long leaseId, String clientId, long fencingToken, byte[] metadata, Optional<Duration> ttlRemaining) {

        public Holder {
            metadata = metadata == null ? new byte[0] : metadata.clone();
            Objects.requireNonNull(ttlRemaining, "ttlRemaining");
        }

        /** A copy: the record's array is not handed out. */
        @Override
        public byte[] metadata() {
            return metadata.clone();
        }
    }

    @Override
    public String toString() {
        if (!held) {
            return "LockDescription{key='" + key + "', free, revision=" + revision + "}";
        }
        return "LockDescription{key='" + key + "', mode=" + mode + ", holders=" + holders.size() + ", holder='" + holder + "', lease=" + leaseId + ", fencingToken="
                + fencingToken + ", metadata=" + metadata.length + " bytes, heldSince=" + heldSinceRevision
                + ", grants=" + grants + ", holderTtlRemaining=" + holderTtlRemaining.map(Duration::toMillis).map(ms -> ms + "ms").orElse("unknown")
                + ", waiters=" + waiters + ", revision=" + revision + "}";
    }
}
