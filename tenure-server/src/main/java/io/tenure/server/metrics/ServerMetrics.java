package io.tenure.server.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The member's Prometheus metrics (seed 002's lock metrics and the Raft and lease figures an
 * operator watches), in base units. Counted where the work is done, once for both front ends.
 *
 * <ul>
 *   <li>{@code lock_acquire_total{result}}: acquired, held (not granted in time), queued (the first phase of a
 *       two-phase acquire), rejected, unavailable</li>
 *   <li>{@code lock_renew_total{result}}: renewed, expired (the lease is gone), rejected, unavailable</li>
 *   <li>{@code lock_release_total{result}}: released, stale (not the holder, or its lease ended), rejected, unavailable</li>
 *   <li>{@code lock_op_latency_seconds{op}}: a histogram per operation (acquire includes queueing)</li>
 *   <li>{@code semaphore_acquire_total{result}} (acquired, not_acquired, queued, rejected, unavailable) and
 *       {@code semaphore_release_total{result}} (released, stale, rejected, unavailable);
 *       {@code election_total{result}} (elected, not_elected, queued, proclaimed, resigned, failures);
 *       {@code barrier_await_total{result}} (released, not_released, failures);
 *       {@code double_barrier_enter_total{result}} (entered, not_entered, failures) and
 *       {@code double_barrier_leave_total{result}} (left, not_left, failures);
 *       {@code latch_total{result}} (set, exists, counted_down, reached_zero, absent, failures) and
 *       {@code latch_await_total{result}} (released, not_released, failures); gauges
 *       {@code semaphores_held}, {@code semaphore_permits_held}, {@code semaphore_waiters}</li>
 *   <li>{@code scope_acquire_total{result}} (acquired, not_acquired, rejected, unavailable), {@code scope_release_total{result}}
 *       (released, stale, rejected, unavailable), {@code scope_cancel_total{result}} (withdrawn, acquired, failures); gauges
 *       {@code scope_sets_held}, {@code scope_parts_held}, {@code scope_sets_waiting}</li>
 *   <li>{@code lock_expired_total}: leases ended by expiry, as applied from the log</li>
 *   <li>{@code overload_shed_total{kind}}: new requests shed while the member was behind (acquire, grant, read, watch)</li>
 *   <li>gauges {@code proposer_waiting{lane}} and {@code proposer_oldest_wait_seconds{lane}} (renewal, work),
 *       {@code raft_entries_in_flight}, {@code raft_commit_lag_entries}, {@code lock_waits_parked}</li>
 *   <li>gauges {@code locks_held} (of them {@code locks_held_read} in read mode, by {@code lock_read_holders}
 *       leases), {@code leases_active}, {@code lock_waiters}, {@code watchers},
 *       {@code raft_term}, {@code raft_commit_index}, {@code raft_applied_index}</li>
 *   <li>{@code raft_leader_changes_total}, {@code raft_apply_latency_seconds},
 *       {@code raft_log_sync_latency_seconds}, {@code raft_snapshot_duration_seconds}</li>
 * </ul>
 */
public final class ServerMetrics {
    private static final Duration[] LATENCY_BUCKETS = {
            Duration.ofNanos(250_000), Duration.ofNanos(500_000), Duration.ofMillis(1), Duration.ofMillis(2),
            Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
            Duration.ofSeconds(2), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(30)};

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ResultCounter acquires = new ResultCounter("lock_acquire", "Lock acquisitions by result");
    private final ResultCounter renews = new ResultCounter("lock_renew", "Lease renewals (keep-alives, HTTP renews) by result");
    private final ResultCounter releases = new ResultCounter("lock_release", "Lock releases by result");
    private final ResultCounter semaphoreAcquires = new ResultCounter("semaphore_acquire", "Semaphore acquisitions by result");
    private final ResultCounter semaphoreReleases = new ResultCounter("semaphore_release", "Semaphore releases by result");
    private final ResultCounter elections = new ResultCounter("election", "Election campaigns, proclaims and resignations by result");
    private final ResultCounter barrierAwaits = new ResultCounter("barrier_await", "Barrier awaits by result");
    private final ResultCounter latchChanges = new ResultCounter("latch", "Latch set-counts and count-downs by result");
    private final ResultCounter latchAwaits = new ResultCounter("latch_await", "Latch awaits by result");
    /** The data primitives' changes by metric name ({@code counter_add}, {@code kv_put}, {@code list_pop}, ...), made on first use. */
    private final Map<String, ResultCounter> dataChanges = new ConcurrentHashMap<>();
    private final Map<String, Counter> grants = new ConcurrentHashMap<>();
    private final ResultCounter doubleBarrierEnters = new ResultCounter("double_barrier_enter", "Double barrier enters by result");
    private final ResultCounter doubleBarrierLeaves = new ResultCounter("double_barrier_leave", "Double barrier leaves by result");
    private final ResultCounter shed = new ResultCounter("overload_shed", "New requests shed while the member was behind, by kind", "kind");
    private final Map<String, Timer> opLatency = new ConcurrentHashMap<>();
    private final Counter expired;
    private final Counter leaderChanges;
    private final Counter signalsDelivered;
    private final Counter textAuthFailures;
    private final ResultCounter textRequests = new ResultCounter("text_request", "Text protocol requests by command", "command");
    private final ResultCounter authFailures = new ResultCounter("auth_failures",
            "Calls refused for a missing, wrong or expired credential, and failed authentications, by front end", "front");
    private final Timer applyLatency;
    private final Timer logSyncLatency;
    private final Timer snapshotDuration;

    public ServerMetrics() {
        expired = Counter.builder("lock_expired").description("Leases ended by expiry (their locks passed on)").register(registry);
        leaderChanges = Counter.builder("raft_leader_changes").description("Leader changes this member observed").register(registry);
        textAuthFailures = Counter.builder("text_auth_failures").description("Text connections that failed the auth handshake").register(registry);
        signalsDelivered = Counter.builder("signal_delivered").description("Signals handed to the streams of this member's listeners").register(registry);
        applyLatency = histogram("raft_apply_latency", "Time to apply one log entry to the state machine").register(registry);
        logSyncLatency = histogram("raft_log_sync_latency", "Time from submitting a log entry to its commit: append, fsync and replication to a majority").register(registry);
        snapshotDuration = histogram("raft_snapshot_duration", "Time to write a snapshot (fsync included)").register(registry);
    }

    /** Registers the gauges read from the member's state on each scrape. */
    public void gauges(Supplier<Number> locksHeld, Supplier<Number> leasesActive, Supplier<Number> lockWaiters,
                       Supplier<Number> watchers, Supplier<Number> term, Supplier<Number> commitIndex,
                       Supplier<Number> appliedIndex) {
        gauge("locks_held", "Locks that have a holder", locksHeld);
        gauge("leases_active", "Leases in the replicated state", leasesActive);
        gauge("lock_waiters", "Leases queued for a lock", lockWaiters);
        gauge("watchers", "Open watches on this member", watchers);
        gauge("raft_term", "The current Raft term", term);
        gauge("raft_commit_index", "The Raft commit index this member knows", commitIndex);
        gauge("raft_applied_index", "The last log index this member applied", appliedIndex);
    }

    /** The read mode's gauges, read from the member's state on each scrape. */
    public void readLockGauges(Supplier<Number> readLocks, Supplier<Number> readHolders) {
        gauge("locks_held_read", "Locks held in read mode (locks_held counts them too)", readLocks);
        gauge("lock_read_holders", "Leases holding a lock in read mode, over every lock", readHolders);
    }

    /** The semaphores' gauges, read from the member's state on each scrape. */
    public void semaphoreGauges(Supplier<Number> held, Supplier<Number> permitsHeld, Supplier<Number> waiters) {
        gauge("semaphores_held", "Semaphores with at least one holder", held);
        gauge("semaphore_permits_held", "Permits held, over every semaphore", permitsHeld);
        gauge("semaphore_waiters", "Leases queued for a semaphore", waiters);
    }

    /** The lock scopes' gauges, read from the member's state on each scrape. */
    public void scopeGauges(Supplier<Number> setsHeld, Supplier<Number> partsHeld, Supplier<Number> setsWaiting) {
        gauge("scope_sets_held", "Sets of scopes held (each with one fencing token)", setsHeld);
        gauge("scope_parts_held", "Inodes, paths and byte ranges held, over every held set", partsHeld);
        gauge("scope_sets_waiting", "Sets of scopes queued, over the whole scope space", setsWaiting);
    }

    /**
     * The signals of overload: what waits for the log in each lane (renewals go first), how long
     * the oldest has waited, the entries in flight, how far apply trails the commit index, and the
     * calls parked until the log decides them.
     */
    public void overloadGauges(ToDoubleFunction<String> waiting, ToDoubleFunction<String> oldestWaitSeconds,
                               Supplier<Number> entriesInFlight, Supplier<Number> commitLag, Supplier<Number> parked) {
        for (String lane : new String[] {"renewal", "work"}) {
            Gauge.builder("proposer_waiting", () -> waiting.applyAsDouble(lane)).tag("lane", lane)
                    .description("Commands waiting for a log entry, by lane (renewals go first)").strongReference(true).register(registry);
            Gauge.builder("proposer_oldest_wait_seconds", () -> oldestWaitSeconds.applyAsDouble(lane)).tag("lane", lane)
                    .description("How long the oldest command waiting for a log entry has waited, by lane").strongReference(true)
                    .register(registry);
        }
        gauge("raft_entries_in_flight", "This member's entries submitted to Raft and not yet answered", entriesInFlight);
        gauge("raft_commit_lag_entries", "Committed log entries this member has not applied yet", commitLag);
        gauge("lock_waits_parked", "Calls parked on this member until the log decides them", parked);
    }

    /** A request shed because the member is behind (acquire, grant, read, watch). */
    /** A text connection gave a wrong token, or a request before {@code auth}. */
    public void textAuthFailure() {
        textAuthFailures.increment();
    }

    /** A call refused as unauthenticated, or a failed authentication, by front end ({@code grpc}, {@code http}, {@code text}, {@code authenticate}). */
    public void authFailure(String front) {
        authFailures.increment(front);
    }

    /** A text request answered, by its command (an unknown command counts as "unknown"). */
    public void textRequest(String command) {
        textRequests.increment(command);
    }

    /** Text connections open on this member. */
    public void textGauges(Supplier<Number> connections) {
        Gauge.builder("text_connections", connections).description("Text protocol connections open on this member").register(registry);
    }

    public void shed(String kind) {
        shed.increment(kind);
    }

    public void acquire(String result) {
        acquires.increment(result);
    }

    public void semaphoreAcquire(String result) {
        semaphoreAcquires.increment(result);
    }

    /** A campaign's result (elected, not_elected, queued, or a failure), or a proclaim or resignation. */
    public void electionChange(String result) {
        elections.increment(result);
    }

    /** An await's result: released, not_released, queued, or a failure. */
    public void barrierAwait(String result) {
        barrierAwaits.increment(result);
    }

    /** The barriers' gauges, read from the member's state on each scrape. */
    public void barrierGauges(Supplier<Number> barriers, Supplier<Number> waiting) {
        gauge("barriers_waited", "Barriers with parties waiting", barriers);
        gauge("barrier_parties_waiting", "Leases waiting at a barrier, over every barrier", waiting);
    }

    /** An enter's result: entered, not_entered, or a failure. */
    public void doubleBarrierEnter(String result) {
        doubleBarrierEnters.increment(result);
    }

    /** A leave's result: left, not_left, or a failure. */
    public void doubleBarrierLeave(String result) {
        doubleBarrierLeaves.increment(result);
    }

    /** The double barriers' gauges, read from the member's state on each scrape. */
    public void doubleBarrierGauges(Supplier<Number> barriers, Supplier<Number> inside, Supplier<Number> waiting) {
        gauge("double_barriers", "Double barriers that exist", barriers);
        gauge("double_barrier_parties_inside", "Parties inside a double barrier, over every double barrier", inside);
        gauge("double_barrier_parties_waiting", "Leases waiting to enter or leave a double barrier, over every double barrier", waiting);
    }

    /** A set-count's result (set, exists) or a count-down's (counted_down, reached_zero, absent), or a failure. */
    public void latchChange(String result) {
        latchChanges.increment(result);
    }

    /** A latch await's result: released, not_released, or a failure. */
    public void latchAwait(String result) {
        latchAwaits.increment(result);
    }

    /** A counter change ({@code op}: add, set, compare_and_set) by result: changed, compare_failed, or a failure. */
    public void counterChange(String op, String result) {
        dataChange("counter", "Counter", op, result);
    }

    /** Counts {@code result} under {@code <kind>_<op>_total}, described as "{@code what} {@code op}s by result". */
    private void dataChange(String kind, String what, String op, String result) {
        dataChanges.computeIfAbsent(kind + "_" + op, name -> new ResultCounter(name, what + " " + op.replace('_', ' ') + "s by result"))
                .increment(result);
    }

    /** A lock scope operation ({@code op}: acquire, release, cancel) by result (see the class comment). */
    public void scopeChange(String op, String result) {
        dataChange("scope", "Scope set", op, result);
    }

    /** A list operation ({@code op}: push, pop, return) by result: stored, handed, popped, empty, returned, kept_by_retry, or a failure. */
    public void listChange(String op, String result) {
        dataChange("list", "List", op, result);
    }

    /**
     * A signal operation ({@code op}: publish, listen, unlisten) by result: for a publish,
     * delivered or unheard (no receiver), else done, cut_off, or a failure.
     */
    public void signalChange(String op, String result) {
        dataChange("signal", "Signal", op, result);
    }

    /** Signals handed to this member's listeners' streams (one per receiver). */
    public void signalsDelivered(int count) {
        signalsDelivered.increment(count);
    }

    /** The signals' gauges: listeners in the cluster's state, and those connected to this member. */
    public void signalGauges(Supplier<Number> listeners, Supplier<Number> local) {
        gauge("signal_listeners", "Listeners registered in the cluster", listeners);
        gauge("signal_listeners_connected", "Listeners whose stream is on this member", local);
    }

    /** The lists' gauges, read from the member's state on each scrape. */
    public void listGauges(Supplier<Number> lists, Supplier<Number> items, Supplier<Number> waiting) {
        gauge("lists", "Lists that exist (with items or waiters)", lists);
        gauge("list_items", "Items over every list", items);
        gauge("list_leases_waiting", "Leases waiting to pop, over every list", waiting);
    }

    /** The counters' gauge, read from the member's state on each scrape. */
    public void counterGauges(Supplier<Number> counters) {
        gauge("counters", "Counters that exist, idle ones at 0 included", counters);
    }

    /**
     * A key-value change ({@code op}: put, compare_and_set, delete, expire) by result: put,
     * compare_failed, deleted, absent, expired, skipped, or a failure.
     */
    public void kvChange(String op, String result) {
        dataChange("kv", "Key-value", op, result);
    }

    /** The key-value store's gauges, read from the member's state on each scrape. */
    public void kvGauges(Supplier<Number> keys, Supplier<Number> ttlDeadlines) {
        gauge("kv_keys", "Keys in the key-value store", keys);
        gauge("kv_ttl_deadlines", "Keys with a time to live whose deadline this member keeps", ttlDeadlines);
    }

    /** The latches' gauges, read from the member's state on each scrape. */
    public void latchGauges(Supplier<Number> latches, Supplier<Number> waiting) {
        gauge("latches_counting", "Latches whose count is above zero", latches);
        gauge("latch_leases_waiting", "Leases waiting for a latch's count to reach zero, over every latch", waiting);
    }

    /** The elections' gauges, read from the member's state on each scrape. */
    public void electionGauges(Supplier<Number> led, Supplier<Number> candidates) {
        gauge("elections_led", "Elections that have a leader", led);
        gauge("election_candidates", "Leases campaigning behind a leader, over every election", candidates);
    }

    public void semaphoreRelease(String result) {
        semaphoreReleases.increment(result);
    }

    public void renew(String result) {
        renews.increment(result);
    }

    public void release(String result) {
        releases.increment(result);
    }

    /** How long one operation took, from the request to its answer. */
    public void latency(String op, long nanos) {
        opLatency.computeIfAbsent(op, o -> histogram("lock_op_latency", "Operation latency by operation")
                .tag("op", o).register(registry)).record(nanos, TimeUnit.NANOSECONDS);
    }

    public void leaseExpired() {
        expired.increment();
    }

    public void leaderChanged() {
        leaderChanges.increment();
    }

    public void applied(long nanos) {
        applyLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void committed(long nanos) {
        logSyncLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void snapshotTaken(long nanos) {
        snapshotDuration.record(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * The result label of a failed operation: {@code rejected} when the state machine or the
     * front end refused it (bad input, not the holder, over a limit), {@code cancelled} when the
     * caller went away, {@code unavailable} when this member could not serve it.
     */
    public static String failureResult(Throwable error) {
        Throwable e = io.tenure.server.Causes.unwrap(error);
        if (e instanceof io.tenure.server.RequestRejected) {
            return "rejected";
        }
        return e instanceof java.util.concurrent.CancellationException ? "cancelled" : "unavailable";
    }

    /** The metrics in the Prometheus text exposition format (version 0.0.4). */
    public String scrape() {
        return registry.scrape();
    }

    /**
     * One counter per result label of one metric. Counted on every keep-alive, so a known label
     * costs one map lookup and nothing is allocated.
     */
    /**
     * A grant answered on this member: {@code kind} lock, semaphore, election, barrier, ...;
     * {@code via} immediate (granted by its own command) or hand_off (by another's release, a
     * lease's end, or the last party's arrival).
     */
    public void granted(String kind, String via) {
        String key = kind + '/' + via;
        Counter counter = grants.get(key);
        if (counter == null) {
            counter = grants.computeIfAbsent(key, k -> Counter.builder("grants")
                    .description("Grants answered on this member, by kind and how they came (immediate or hand_off)")
                    .tag("kind", kind).tag("via", via).register(registry));
        }
        counter.increment();
    }

    private final class ResultCounter {
        private final String name;
        private final String description;
        private final String label;
        private final Map<String, Counter> byResult = new ConcurrentHashMap<>();

        ResultCounter(String name, String description) {
            this(name, description, "result");
        }

        ResultCounter(String name, String description, String label) {
            this.name = name;
            this.description = description;
            this.label = label;
        }

        void increment(String result) {
            Counter counter = byResult.get(result);
            if (counter == null) {
                counter = byResult.computeIfAbsent(result, r -> Counter.builder(name).description(description)
                        .tag(label, r).register(registry));
            }
            counter.increment();
        }
    }

    private void gauge(String name, String description, Supplier<Number> value) {
        ToDoubleFunction<Supplier<Number>> read = supplier -> {
            Number n = supplier.get();
            return n == null ? Double.NaN : n.doubleValue();
        };
        // Strong: the suppliers are lambdas nobody else keeps, and a weakly held one reads NaN after a GC.
        Gauge.builder(name, value, read).description(description).strongReference(true).register(registry);
    }

    private static Timer.Builder histogram(String name, String description) {
        return Timer.builder(name).description(description).serviceLevelObjectives(LATENCY_BUCKETS)
                .minimumExpectedValue(LATENCY_BUCKETS[0]).maximumExpectedValue(LATENCY_BUCKETS[LATENCY_BUCKETS.length - 1]);
    }
}
