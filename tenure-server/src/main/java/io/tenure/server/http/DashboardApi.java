package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.http.Context;
import io.javalin.http.sse.SseClient;
import io.javalin.http.sse.SseHandler;
import io.tenure.core.Limits;
import io.tenure.core.TenureState;
import io.tenure.core.access.Level;
import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.barrier.BarrierView;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.election.ElectionView;
import io.tenure.core.kernel.LeaseView;
import io.tenure.core.latch.LatchTable;
import io.tenure.core.latch.LatchView;
import io.tenure.core.lock.LockTable;
import io.tenure.core.lock.LockView;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.semaphore.SemaphoreView;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.server.Member;
import io.tenure.server.security.Permissions;
import io.tenure.server.security.Principal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The live dashboard's data ({@code /ui} shows it):
 *
 * <ul>
 *   <li><b>GET /v1/dashboard[?prefix=P]</b>: one JSON snapshot of this member's applied state:
 *       {@code member} and {@code cluster} (members, leader, term, commit and applied index),
 *       {@code locks}, {@code semaphores}, {@code elections}, {@code barriers} and
 *       {@code latches} whose names start with {@code prefix} (each a section with its
 *       {@code items} in name order, their holders with fencing tokens and their waiters in queue
 *       order, and {@code more} when the section was cut), {@code leases} (those bound to the
 *       resources shown, and every lease while the member has at most {@value #LISTED_LEASES}),
 *       each with {@code ttl_remaining_ms} on this member's clock, {@code totals} per kind, and
 *       {@code rates} (the last minute's samples, taken while a dashboard stream is open on this
 *       member; none otherwise).</li>
 *   <li><b>GET /v1/dashboard/events[?prefix=P]</b> with {@code Accept: text/event-stream}: a
 *       server-sent event stream. A {@code snapshot} event (the body above, without rates) comes
 *       at once and again whenever this member applied an entry or saw the leader or term change,
 *       at most every {@value #PUSH_EVERY_MS} ms however busy the member is; a {@code rates} event
 *       comes every second with the samples not sent yet (the first with the last minute's). A
 *       slow reader gets fewer snapshots, never a backlog. The stream ends when the client goes
 *       (seen at the next write, within a second).</li>
 * </ul>
 *
 * <p>Bounded whatever the member holds: at most {@value #SHOWN} resources of each kind and
 * {@value #LISTED_LEASES} leases, read under the state's read lock (the resources in one read, the
 * leases bound to those shown in a second); a principal that may read only part of the names has at
 * most {@value #SCANNED} names of each kind looked at, checked after the read, off the lock.
 * Read without a read barrier, like the text protocol's {@code stats}: what this member has
 * applied ({@code cluster.applied_index} says how far), a view, not a linearizable read.
 *
 * <p>With authentication on, both need a credential like every {@code /v1} route (401 without),
 * and show only what the caller may read: a resource only when it has {@code read} on its name
 * and kind (what {@code GET /v1/locks/{name}} and the other describe routes require, decided by
 * {@link Permissions#permits}, the rule they check); a lease only
 * when bound to a resource shown, listing only the names shown; totals only to a caller that may
 * read everything. Nothing is refused: what may not be read is left out, so the page works for
 * every user, and the audit trail is not written for every name left out on every push.
 */
final class DashboardApi {
    /** Resources of each kind in one snapshot. */
    static final int SHOWN = 100;
    /** Names of each kind looked at for a caller that may read only some of them. */
    static final int SCANNED = 2_000;
    /** Leases in one snapshot. */
    static final int LISTED_LEASES = 200;
    /** The least time between two snapshots of one stream. */
    static final long PUSH_EVERY_MS = 250;
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    private final Member member;
    private final Permissions permissions;
    private final ScheduledExecutorService timer;
    private final Executor writers;
    private final DashboardRates rates;

    /**
     * @param timer   when each stream looks for a change (the work is done on {@code writers})
     * @param writers where snapshots are read and written: a slow client holds one of them, never the timer
     */
    DashboardApi(Member member, Permissions permissions, ScheduledExecutorService timer, Executor writers) {
        this.member = member;
        this.permissions = permissions;
        this.timer = timer;
        this.writers = writers;
        this.rates = new DashboardRates(() -> member.metrics().scrape(), timer, System::nanoTime, System::currentTimeMillis);
    }

    CompletableFuture<Answer> snapshot(Principal caller, String prefixText) {
        ObjectNode body = snapshotOf(caller, prefix(prefixText));
        body.set("rates", ratesJson(rates.history()));
        return CompletableFuture.completedFuture(Answer.ok(body));
    }

    /** Checks the query, then turns the request into an event stream (see the class comment). */
    void stream(Principal caller, Context ctx) throws Exception {
        String prefix = prefix(ctx.queryParam("prefix"));
        if (!"text/event-stream".equals(ctx.header("Accept"))) {
            throw Failure.invalid("Accept", "the dashboard's events are a server-sent event stream: send Accept: text/event-stream");
        }
        new SseHandler(0, client -> {
            client.keepAlive();
            Stream stream = new Stream(client, caller, prefix);
            client.onClose(stream::end);
            stream.start();
        }).handle(ctx);
    }

    /** The {@code prefix} query parameter: any name prefix up to the longest name; "" when absent. */
    static String prefix(String text) {
        if (text == null) {
            return "";
        }
        if (text.getBytes(StandardCharsets.UTF_8).length > Limits.MAX_KEY_BYTES) {
            throw Failure.invalid("prefix", "prefix must be at most " + Limits.MAX_KEY_BYTES + " bytes (UTF-8), like a name, got "
                    + text.getBytes(StandardCharsets.UTF_8).length);
        }
        return text;
    }

    // ---- the snapshot ---------------------------------------------------------------------------

    /** Up to {@link #SHOWN} resources of one kind the caller may read, and whether there are more. */
    private record Section<V>(List<V> items, boolean more) {
        static <V> Section<V> of(List<V> read, Function<V, String> name, Predicate<String> mayRead) {
            List<V> items = new ArrayList<>();
            boolean more = false;
            for (V view : read) {
                if (!mayRead.test(name.apply(view))) {
                    continue;
                }
                if (items.size() == SHOWN) {
                    more = true;
                    break;
                }
                items.add(view);
            }
            // A caller who sees everything read one name past what is shown; one who sees part may
            // have readable names beyond the names looked at, which it finds with a narrower prefix.
            return new Section<>(items, more);
        }
    }

    /** What one read of the state holds: the views of each kind by name, and, when few and all are shown, every lease. */
    private record Read(List<LockView> locks, List<SemaphoreView> semaphores, List<ElectionView> elections,
                        List<BarrierView> barriers, List<LatchView> latches, List<LeaseView> allLeases, long[] totals) {
        static Read of(TenureState state, String prefix, boolean everything) {
            int scan = (everything ? SHOWN : SCANNED) + 1; // a caller who sees them all needs one past what is shown
            boolean fewLeases = everything && prefix.isEmpty() && state.leaseCount() <= LISTED_LEASES;
            return new Read(state.primitive(LockTable.class).locks(prefix, scan),
                    state.primitive(SemaphoreTable.class).semaphores(prefix, scan),
                    state.primitive(ElectionTable.class).elections(prefix, scan),
                    state.primitive(BarrierTable.class).barriers(prefix, scan),
                    state.primitive(LatchTable.class).latches(prefix, scan),
                    fewLeases ? List.copyOf(state.leases()) : null, // few: every lease, idle ones too
                    everything ? new long[] {
                            state.primitive(LockTable.class).lockCount(),
                            state.primitive(SemaphoreTable.class).semaphoreCount(),
                            state.primitive(ElectionTable.class).electionCount(),
                            state.primitive(BarrierTable.class).barrierCount(),
                            state.primitive(LatchTable.class).latchCount(),
                            state.leaseCount()} : null);
        }
    }

    /** What the snapshot shows to one caller for one prefix. */
    private record Found(boolean everything, Section<LockView> locks, Section<SemaphoreView> semaphores,
                         Section<ElectionView> elections, Section<BarrierView> barriers, Section<LatchView> latches,
                         List<LeaseView> leases, boolean moreLeases, Set<String> shownNames, long[] totals) {}

    private static final String LOCK = Permissions.kind(LockTable.NAME);
    private static final String SEMAPHORE = Permissions.kind(SemaphoreTable.NAME);
    private static final String ELECTION = Permissions.kind(ElectionTable.NAME);
    private static final String BARRIER = Permissions.kind(BarrierTable.NAME);
    private static final String LATCH = Permissions.kind(LatchTable.NAME);

    /**
     * The snapshot for {@code caller}: the resources read from the applied state under its read
     * lock, filtered by the caller's permissions after it (the apply loop never waits for a
     * permission check), then the leases bound to what is shown and their remaining TTLs.
     */
    ObjectNode snapshotOf(Principal caller, String prefix) {
        StatusResponse status = member.status(ResponseHeader.getDefaultInstance());
        Found found = find(caller, prefix);
        ObjectNode body = NODES.objectNode();
        body.put("prefix", prefix);
        ObjectNode self = body.putObject("member");
        self.put("name", status.getMemberName());
        self.put("version", status.getVersion());
        self.put("raft_engine", status.getRaftEngine());
        ObjectNode cluster = body.putObject("cluster");
        cluster.put("leader", status.getLeader().isEmpty() ? null : status.getLeader());
        cluster.put("term", status.getRaftTerm());
        cluster.put("commit_index", status.getCommitIndex());
        cluster.put("applied_index", status.getAppliedIndex());
        cluster.put("revision", status.getRevision());
        ArrayNode members = cluster.putArray("members");
        for (io.tenure.proto.v1.Member m : status.getMembersList()) {
            ObjectNode node = members.addObject();
            node.put("name", m.getName());
            node.put("client_endpoint", m.getClientEndpoint());
            node.put("peer_address", m.getPeerAddress());
            node.put("leader", m.getLeader());
            node.put("self", m.getName().equals(status.getMemberName()));
        }
        body.set("locks", section(found.locks(), DashboardApi::lockJson));
        body.set("semaphores", section(found.semaphores(), DashboardApi::semaphoreJson));
        body.set("elections", section(found.elections(), DashboardApi::electionJson));
        body.set("barriers", section(found.barriers(), DashboardApi::barrierJson));
        body.set("latches", section(found.latches(), DashboardApi::latchJson));
        ObjectNode leases = body.putObject("leases");
        ArrayNode leaseItems = leases.putArray("items");
        for (LeaseView lease : found.leases()) {
            leaseItems.add(leaseJson(lease, member.leases().remainingMillis(lease.leaseId()), found));
        }
        leases.put("more", found.moreLeases());
        if (found.totals() != null) {
            ObjectNode totals = body.putObject("totals");
            String[] kinds = {"locks", "semaphores", "elections", "barriers", "latches", "leases"};
            for (int i = 0; i < kinds.length; i++) {
                totals.put(kinds[i], found.totals()[i]);
            }
        }
        return body;
    }

    /**
     * Reads the sections under the state's read lock, keeps what {@code caller} may read (by
     * {@link Permissions#permits}, outside the lock), then reads the leases bound to them.
     */
    private Found find(Principal caller, String prefix) {
        boolean everything = permissions.readsEverything(caller);
        Read read = member.stateMachine().read(state -> Read.of(state, prefix, everything));
        Section<LockView> locks = Section.of(read.locks(), LockView::key, name -> everything || permissions.permits(caller, LOCK, name, Level.READ));
        Section<SemaphoreView> semaphores = Section.of(read.semaphores(), SemaphoreView::key,
                name -> everything || permissions.permits(caller, SEMAPHORE, name, Level.READ));
        Section<ElectionView> elections = Section.of(read.elections(), ElectionView::key,
                name -> everything || permissions.permits(caller, ELECTION, name, Level.READ));
        Section<BarrierView> barriers = Section.of(read.barriers(), BarrierView::key,
                name -> everything || permissions.permits(caller, BARRIER, name, Level.READ));
        Section<LatchView> latches = Section.of(read.latches(), LatchView::key, name -> everything || permissions.permits(caller, LATCH, name, Level.READ));

        Set<String> shown = new HashSet<>();
        TreeSet<Long> leaseIds = new TreeSet<>();
        for (LockView lock : locks.items()) {
            shown.add(lock.key());
            lock.holders().forEach(h -> leaseIds.add(h.leaseId()));
            lock.waiters().forEach(w -> leaseIds.add(w.leaseId()));
        }
        for (SemaphoreView semaphore : semaphores.items()) {
            shown.add(semaphore.key());
            semaphore.holders().forEach(h -> leaseIds.add(h.leaseId()));
            semaphore.waiters().forEach(w -> leaseIds.add(w.leaseId()));
        }
        for (ElectionView election : elections.items()) {
            shown.add(election.key());
            leaseIds.add(election.leaderLeaseId());
            election.candidates().forEach(c -> leaseIds.add(c.leaseId()));
        }
        for (BarrierView barrier : barriers.items()) {
            shown.add(barrier.key());
            barrier.waiting().forEach(p -> leaseIds.add(p.leaseId()));
        }
        for (LatchView latch : latches.items()) {
            shown.add(latch.key());
            latch.waiting().forEach(w -> leaseIds.add(w.leaseId()));
        }
        List<LeaseView> leases;
        boolean moreLeases;
        if (read.allLeases() != null) {
            leases = read.allLeases();
            moreLeases = false;
        } else {
            List<Long> wanted = leaseIds.stream().limit(LISTED_LEASES).toList();
            leases = member.stateMachine().read(state -> {
                List<LeaseView> found = new ArrayList<>();
                for (long id : wanted) {
                    LeaseView lease = state.lease(id);
                    if (lease != null) {
                        found.add(lease);
                    }
                }
                return found;
            });
            moreLeases = leaseIds.size() > LISTED_LEASES || (everything && prefix.isEmpty() && read.totals()[5] > leases.size());
        }
        return new Found(everything, locks, semaphores, elections, barriers, latches, leases, moreLeases, shown, read.totals());
    }

    private static <V> ObjectNode section(Section<V> section, Function<V, ObjectNode> json) {
        ObjectNode node = NODES.objectNode();
        ArrayNode items = node.putArray("items");
        section.items().forEach(view -> items.add(json.apply(view)));
        node.put("more", section.more());
        return node;
    }

    private static ObjectNode lockJson(LockView lock) {
        ObjectNode node = NODES.objectNode();
        node.put("name", lock.key());
        node.put("mode", lock.shared() ? "read" : "write");
        node.put("version", lock.version());
        ArrayNode holders = node.putArray("holders");
        for (LockView.Holder h : lock.holders()) {
            holders.addObject().put("lease_id", h.leaseId()).put("owner", h.clientId()).put("fencing_token", h.fencingToken());
        }
        ArrayNode waiters = node.putArray("waiters");
        for (LockView.Waiter w : lock.waiters()) {
            waiters.addObject().put("lease_id", w.leaseId()).put("owner", w.clientId()).put("mode", w.shared() ? "read" : "write")
                    .put("joined_at", w.joinedAt());
        }
        return node;
    }

    private static ObjectNode semaphoreJson(SemaphoreView semaphore) {
        ObjectNode node = NODES.objectNode();
        node.put("name", semaphore.key());
        node.put("limit", semaphore.limit());
        node.put("available", semaphore.available());
        ArrayNode holders = node.putArray("holders");
        for (SemaphoreView.Holder h : semaphore.holders()) {
            holders.addObject().put("lease_id", h.leaseId()).put("owner", h.clientId()).put("permits", h.permits())
                    .put("fencing_token", h.fencingToken());
        }
        ArrayNode waiters = node.putArray("waiters");
        for (SemaphoreView.Waiter w : semaphore.waiters()) {
            waiters.addObject().put("lease_id", w.leaseId()).put("owner", w.clientId()).put("permits", w.permits()).put("joined_at", w.joinedAt());
        }
        return node;
    }

    private static ObjectNode electionJson(ElectionView election) {
        ObjectNode node = NODES.objectNode();
        node.put("name", election.key());
        node.putArray("holders").addObject().put("lease_id", election.leaderLeaseId()).put("owner", election.leader())
                .put("fencing_token", election.fencingToken());
        ArrayNode waiters = node.putArray("waiters");
        for (ElectionView.Candidate c : election.candidates()) {
            waiters.addObject().put("lease_id", c.leaseId()).put("owner", c.clientId()).put("joined_at", c.joinedAt());
        }
        return node;
    }

    private static ObjectNode barrierJson(BarrierView barrier) {
        ObjectNode node = NODES.objectNode();
        node.put("name", barrier.key());
        node.put("parties", barrier.parties());
        node.putArray("holders");
        ArrayNode waiters = node.putArray("waiters");
        for (BarrierView.Party p : barrier.waiting()) {
            waiters.addObject().put("lease_id", p.leaseId()).put("owner", p.clientId()).put("joined_at", p.arrivedAt());
        }
        return node;
    }

    private static ObjectNode latchJson(LatchView latch) {
        ObjectNode node = NODES.objectNode();
        node.put("name", latch.key());
        node.put("count", latch.count());
        node.put("initial_count", latch.initialCount());
        node.putArray("holders");
        ArrayNode waiters = node.putArray("waiters");
        for (LatchView.Waiter w : latch.waiting()) {
            waiters.addObject().put("lease_id", w.leaseId()).put("owner", w.clientId()).put("joined_at", w.arrivedAt());
        }
        return node;
    }

    /** A lease; to a caller who may not read everything, only the names of the snapshot it holds or waits for. */
    private static ObjectNode leaseJson(LeaseView lease, long remainingMillis, Found found) {
        ObjectNode node = NODES.objectNode();
        node.put("lease_id", lease.leaseId());
        node.put("owner", lease.clientId());
        node.put("ttl_ms", lease.ttlMillis());
        // -1: this member has no deadline for it yet (it just restarted or caught up)
        node.put("ttl_remaining_ms", remainingMillis);
        ArrayNode held = node.putArray("holds");
        lease.held().stream().filter(name -> found.everything() || found.shownNames().contains(name)).forEach(held::add);
        ArrayNode waiting = node.putArray("waits");
        lease.waiting().stream().filter(name -> found.everything() || found.shownNames().contains(name)).forEach(waiting::add);
        return node;
    }

    private static ObjectNode ratesJson(List<DashboardRates.Sample> samples) {
        ObjectNode node = NODES.objectNode();
        node.put("interval_ms", DashboardRates.SAMPLE_EVERY_MS);
        ArrayNode items = node.putArray("samples");
        for (DashboardRates.Sample s : samples) {
            ObjectNode sample = items.addObject();
            sample.put("at_ms", s.atMillis());
            sample.put("grants_per_s", round(s.grantsPerSecond()));
            sample.put("hand_offs_per_s", round(s.handOffsPerSecond()));
            sample.put("keep_alives_per_s", round(s.keepAlivesPerSecond()));
            if (s.acquireP99Ms() < 0) {
                sample.putNull("acquire_p99_ms");
            } else {
                sample.put("acquire_p99_ms", round(s.acquireP99Ms()));
            }
        }
        return node;
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }

    // ---- the event stream -----------------------------------------------------------------------

    /**
     * One event stream. The timer looks every {@link #PUSH_EVERY_MS} ms; when the member moved (or
     * a second passed, for the rates) and no write of this stream is under way, one task on the
     * writers reads and writes. So at most one snapshot is in flight per stream.
     */
    private final class Stream {
        private final SseClient client;
        private final Principal caller;
        private final String prefix;
        private ScheduledFuture<?> ticks;
        private boolean busy;
        private boolean opened;
        private boolean ended;
        /** What the last snapshot showed: the applied index, commit index, term and leader. */
        private String shown = "";
        private long ratesSentUpTo = Long.MIN_VALUE;
        private long ratesSentAt;

        Stream(SseClient client, Principal caller, String prefix) {
            this.client = client;
            this.caller = caller;
            this.prefix = prefix;
        }

        synchronized void start() {
            if (ended) {
                return; // the client left before the stream started
            }
            opened = true;
            rates.streamOpened();
            ticks = timer.scheduleAtFixedRate(this::tick, 0, PUSH_EVERY_MS, TimeUnit.MILLISECONDS);
        }

        private void tick() {
            synchronized (this) {
                if (busy || ended) {
                    return;
                }
                busy = true;
            }
            try {
                writers.execute(this::push);
            } catch (RuntimeException rejected) {
                end(); // the front end is closing
            }
        }

        private void push() {
            try {
                String now = member.stateMachine().appliedIndex() + "/" + member.commitIndex() + "/" + member.term() + "/"
                        + member.stateMachine().leaderEndpoint();
                if (!now.equals(shown)) {
                    shown = now;
                    client.sendEvent("snapshot", snapshotOf(caller, prefix).toString());
                }
                long at = System.nanoTime();
                if (ratesSentUpTo == Long.MIN_VALUE || at - ratesSentAt >= TimeUnit.MILLISECONDS.toNanos(DashboardRates.SAMPLE_EVERY_MS)) {
                    ratesSentAt = at;
                    List<DashboardRates.Sample> unsent = new ArrayList<>();
                    for (DashboardRates.Sample s : rates.history()) {
                        if (s.atMillis() > ratesSentUpTo) {
                            unsent.add(s);
                        }
                    }
                    if (!unsent.isEmpty()) {
                        ratesSentUpTo = unsent.get(unsent.size() - 1).atMillis();
                    } else if (ratesSentUpTo == Long.MIN_VALUE) {
                        ratesSentUpTo = 0;
                    }
                    // Sent even when empty: it keeps a quiet stream from looking idle, and shows a
                    // client that went away within a second.
                    client.sendEvent("rates", ratesJson(unsent).toString());
                }
                if (client.terminated()) {
                    end();
                }
            } catch (RuntimeException e) {
                end(); // the client went away mid-write
            } finally {
                synchronized (this) {
                    busy = false;
                }
            }
        }

        /** The stream closed (either side): its ticks stop and it no longer counts for the rates. Idempotent. */
        void end() {
            boolean counted;
            synchronized (this) {
                if (ended) {
                    return;
                }
                ended = true;
                counted = opened;
                if (ticks != null) {
                    ticks.cancel(false);
                }
            }
            if (counted) {
                rates.streamClosed();
            }
            client.close();
        }
    }
}
