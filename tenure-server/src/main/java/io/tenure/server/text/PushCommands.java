package io.tenure.server.text;

import io.tenure.core.barrier.BarrierTable;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.election.ElectionTable;
import io.tenure.core.election.ElectionView;
import io.tenure.core.kernel.Result;
import io.tenure.core.kv.KvTable;
import io.tenure.core.list.ListTable;
import io.tenure.core.lock.LockTable;
import io.tenure.core.semaphore.SemaphoreTable;
import io.tenure.core.watch.KeyPattern;
import io.tenure.core.watch.WatchEvent;
import io.tenure.server.Acquires;
import io.tenure.server.RequestRejected;
import io.tenure.server.barrier.Barriers;
import io.tenure.server.signal.Signals;
import io.tenure.server.watch.WatchHub;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The commands that push: {@code listen}, {@code unlisten} and {@code signal} (pub/sub with queue
 * groups), {@code watch} and {@code unwatch}, {@code observe} and {@code unobserve} (an
 * election's leader changes), and {@code bwait} (a barrier).
 *
 * <p>Listeners and barrier waits are bound to the connection's lease, so they end with the
 * connection (and within a TTL when its member dies). Watches and observers are served from this
 * member's applied events, from the revision at which they start. Each listen, watch or observe
 * takes one of the connection's {@code --max-subscriptions}.
 *
 * <p>Watch events carry dflockd's names, from the kind and change of Tenure's events: a lock,
 * semaphore or read/write lock grant is {@code acquire} and its release or end {@code release};
 * a counter's change {@code incr} when its value grew, {@code decr} when it shrank, and
 * {@code cset} otherwise (and when this watch has not seen the counter before); a key's put
 * {@code kset} and its deletion {@code kdel} (a compare-and-set is a put); a list that grew
 * {@code rpush} and one that shrank {@code lpop} (Tenure's events do not say which end);
 * an election's new leader {@code elect} and its end {@code resign}.
 */
final class PushCommands {
    private static final SecureRandom RANDOM = new SecureRandom();

    private PushCommands() {}

    static void register(Map<String, TextCommand> into) {
        into.put("listen", PushCommands::listen);
        into.put("unlisten", PushCommands::unlisten);
        into.put("signal", PushCommands::signal);
        into.put("watch", PushCommands::watch);
        into.put("unwatch", PushCommands::unwatch);
        into.put("observe", PushCommands::observe);
        into.put("unobserve", PushCommands::unobserve);
        into.put("bwait", PushCommands::bwait);
    }

    /** What one connection has registered, by its command's name and key (and group). */
    private static final class Registrations {
        final Map<String, Runnable> byName = new HashMap<>();
    }

    private static Registrations of(TextSession session) {
        boolean[] made = new boolean[1];
        Registrations r = session.attachment(Registrations.class, Registrations::new, made);
        if (made[0]) {
            session.onClose(() -> {
                List<Runnable> ends;
                synchronized (r) {
                    ends = List.copyOf(r.byName.values());
                    r.byName.clear();
                }
                ends.forEach(Runnable::run);
            });
        }
        return r;
    }

    /** Registers {@code end} under {@code name}; false when the connection has one already (answered ok, one registration). */
    private static boolean register(TextSession session, String name, Runnable end) {
        Registrations r = of(session);
        synchronized (r) {
            if (r.byName.containsKey(name)) {
                return false;
            }
            r.byName.put(name, end);
            return true;
        }
    }

    private static Runnable unregister(TextSession session, String name) {
        Registrations r = of(session);
        synchronized (r) {
            return r.byName.remove(name);
        }
    }

    private static boolean registered(TextSession session, String name) {
        Registrations r = of(session);
        synchronized (r) {
            return r.byName.containsKey(name);
        }
    }

    // ---- pub/sub ---------------------------------------------------------------------------------

    // listen pattern [group]
    private static CompletableFuture<String> listen(TextSession session, TextRequest request) {
        String group = TextArgs.of(request).count(0, 1).size() == 1 ? TextArgs.of(request).field(0) : "";
        String pattern = request.key();
        String name = "listen\n" + pattern + "\n" + group;
        if (KeyPattern.check("pattern", pattern) != null) {
            throw TextRefusal.error(TextRefusal.BAD_KEY, KeyPattern.check("pattern", pattern));
        }
        if (registered(session, name)) {
            return CompletableFuture.completedFuture("ok");
        }
        if (!session.subscribe()) {
            throw TextRefusal.status("error", "--max-subscriptions reached on this connection");
        }
        Signals.Sink sink = new Signals.Sink() {
            @Override
            public void send(List<Signals.Signal> signals) {
                for (Signals.Signal signal : signals) {
                    session.push("sig " + signal.channel() + " " + new String(signal.payload(), StandardCharsets.UTF_8));
                }
            }

            @Override
            public boolean ready() {
                return true;
            }

            @Override
            public void cutOff(String reason, boolean tooSlow) {
                if (unregister(session, name) != null) {
                    session.unsubscribe();
                }
            }

            @Override
            public void leaseEnded(String reason) {
                cutOff(reason, false);
            }
        };
        return session.connectionLease()
                .thenCompose(lease -> session.member().signals().listen(session.principal(), pattern, group, lease, 0, sink))
                .handle((listener, error) -> {
                    if (error != null) {
                        session.unsubscribe();
                        throw error instanceof CompletionException c ? c : new CompletionException(error);
                    }
                    if (!register(session, name, listener::close)) {
                        listener.close();
                        session.unsubscribe();
                    }
                    return "ok";
                });
    }

    // unlisten pattern [group]
    private static CompletableFuture<String> unlisten(TextSession session, TextRequest request) {
        TextArgs args = TextArgs.of(request).count(0, 1);
        String group = args.size() == 1 ? args.field(0) : "";
        Runnable end = unregister(session, "listen\n" + request.key() + "\n" + group);
        if (end != null) {
            end.run();
            session.unsubscribe();
        }
        return CompletableFuture.completedFuture("ok");
    }

    // signal channel payload
    private static CompletableFuture<String> signal(TextSession session, TextRequest request) {
        String channel = request.key();
        if (KeyPattern.checkLiteral("channel", channel) != null) {
            throw TextRefusal.error(TextRefusal.BAD_KEY, "a signal goes to a literal channel, not a pattern: " + channel);
        }
        if (request.arg().isBlank()) {
            throw TextRefusal.error(TextRefusal.MALFORMED_ARG, "empty payload");
        }
        return session.member().signals().publish(session.principal(), channel, request.arg().getBytes(StandardCharsets.UTF_8), RANDOM.nextLong() & Long.MAX_VALUE)
                .thenApply(receivers -> "ok " + receivers);
    }

    // ---- watches and observers -------------------------------------------------------------------

    // watch key-or-pattern
    private static CompletableFuture<String> watch(TextSession session, TextRequest request) {
        String key = request.key();
        String problem = KeyPattern.check("key", key);
        if (problem != null) {
            throw TextRefusal.error(TextRefusal.BAD_KEY, problem);
        }
        String name = "watch\n" + key;
        if (registered(session, name)) {
            return CompletableFuture.completedFuture("ok");
        }
        if (!session.subscribe()) {
            throw TextRefusal.status("error", "--max-subscriptions reached on this connection");
        }
        Map<String, Long> lastValues = new HashMap<>();
        WatchHub.Opened opened;
        try {
            opened = session.member().watches().open(session.principal(), java.util.Set.of(), KeyPattern.parse("key", key), 0,
                    sink(session, name, events -> {
                        for (WatchEvent event : events) {
                            String named = eventName(event, lastValues);
                            if (named != null) {
                                session.push("watch " + named + " " + event.key());
                            }
                        }
                    }));
        } catch (io.tenure.server.PermissionDenied denied) {
            session.unsubscribe();
            throw denied;
        }
        register(session, name, opened.watcher()::close);
        return CompletableFuture.completedFuture("ok");
    }

    // unwatch key-or-pattern
    private static CompletableFuture<String> unwatch(TextSession session, TextRequest request) {
        Runnable end = unregister(session, "watch\n" + request.key());
        if (end != null) {
            end.run();
            session.unsubscribe();
        }
        return CompletableFuture.completedFuture("ok");
    }

    // observe election
    private static CompletableFuture<String> observe(TextSession session, TextRequest request) {
        String key = request.key();
        String name = "observe\n" + key;
        if (registered(session, name)) {
            return CompletableFuture.completedFuture("ok");
        }
        if (!session.subscribe()) {
            throw TextRefusal.status("error", "--max-subscriptions reached on this connection");
        }
        WatchHub.Opened opened;
        try {
            opened = session.member().watches().open(session.principal(), java.util.Set.of(ElectionTable.NAME), key, false, 0, sink(session, name, events -> {
                for (WatchEvent event : events) {
                    if (!ElectionTable.NAME.equals(event.kind())) {
                        continue;
                    }
                    if (event.type() == WatchEvent.Type.PUT) {
                        // A new leader (a grant), not a proclaim of the same one.
                        if (event.prevKv() == null || event.prevKv().leaseId() != event.kv().leaseId()) {
                            session.push("leader elected " + key);
                        }
                    } else {
                        session.push("leader " + (resigned(session, event) ? "resigned " : "failover ") + key);
                    }
                }
            }));
        } catch (io.tenure.server.PermissionDenied denied) {
            session.unsubscribe();
            throw denied;
        }
        register(session, name, opened.watcher()::close);
        ElectionView leader = session.member().elections().current(key).election();
        if (leader != null) {
            session.pushAfterAnswer("leader elected " + key);
        }
        return CompletableFuture.completedFuture("ok");
    }

    // unobserve election
    private static CompletableFuture<String> unobserve(TextSession session, TextRequest request) {
        Runnable end = unregister(session, "observe\n" + request.key());
        if (end != null) {
            end.run();
            session.unsubscribe();
        }
        return CompletableFuture.completedFuture("ok");
    }

    /**
     * Whether an election's end was a resignation: its leader's lease still lives (a resignation
     * keeps the lease), where an expiry or a revocation ended the lease with the leadership.
     */
    private static boolean resigned(TextSession session, WatchEvent event) {
        return event.prevKv() != null && event.prevKv().leaseId() != 0 && session.member().leases().view(event.prevKv().leaseId()) != null;
    }

    private static WatchHub.Sink sink(TextSession session, String name, java.util.function.Consumer<List<WatchEvent>> deliver) {
        return new WatchHub.Sink() {
            @Override
            public void send(List<WatchEvent> events) {
                deliver.accept(events);
            }

            @Override
            public boolean ready() {
                return true;
            }

            @Override
            public void cancelled(String reason) {
                if (unregister(session, name) != null) {
                    session.unsubscribe();
                }
            }
        };
    }

    /** dflockd's name of a change, or null for a kind it has no event for. */
    static String eventName(WatchEvent event, Map<String, Long> lastValues) {
        boolean put = event.type() == WatchEvent.Type.PUT;
        String kind = event.kind();
        if (LockTable.NAME.equals(kind) || SemaphoreTable.NAME.equals(kind)) {
            return put ? "acquire" : "release";
        } else if (ElectionTable.NAME.equals(kind)) {
            return put ? "elect" : "resign";
        } else if (KvTable.NAME.equals(kind)) {
            return put ? "kset" : "kdel";
        } else if (CounterTable.NAME.equals(kind)) {
            long value = Long.parseLong(new String(event.kv().metadata(), StandardCharsets.US_ASCII));
            Long before = lastValues.put(event.key(), value);
            return before == null || before == value ? "cset" : value > before ? "incr" : "decr";
        } else if (ListTable.NAME.equals(kind)) {
            long size = put ? event.kv().version() : 0;
            Long before = lastValues.put(event.key(), size);
            return before != null && size < before || !put ? "lpop" : "rpush";
        }
        return null;
    }

    // ---- barriers ----------------------------------------------------------------------------------

    // bwait name <count> <timeout>
    private static CompletableFuture<String> bwait(TextSession session, TextRequest request) {
        TextArgs args = TextArgs.of(request).count(2, 2);
        int parties = args.positiveCount(0);
        long timeoutMs = Math.multiplyExact(args.seconds(1), 1000L);
        String problem = BarrierTable.checkParties(parties);
        if (problem != null) {
            throw TextRefusal.error(TextRefusal.COUNT_NOT_POSITIVE, problem);
        }
        String key = request.key();
        Barriers barriers = session.member().barriers();
        long requestId = RANDOM.nextLong() & Long.MAX_VALUE;
        return session.connectionLease().thenCompose(lease -> {
            Acquires.Wait<Barriers.Outcome> wait = barriers.await(session.principal(), key, lease, parties, timeoutMs, requestId);
            CompletableFuture<Barriers.Outcome> result = wait.outcome().thenApply(o -> o);
            Runnable leave = () -> {
                wait.abandon();
                barriers.leave(session.principal(), key, lease, requestId);
                result.completeExceptionally(TextRefusal.error(11, "client gone"));
            };
            session.onClose(leave);
            return result.handle((outcome, error) -> {
                session.forget(leave);
                if (error != null) {
                    Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                    if (cause instanceof RequestRejected r && r.code() == Result.Code.FAILED_PRECONDITION && !TextCommands.isKindMismatch(r)) {
                        throw TextRefusal.status("error_barrier_count_mismatch", r.getMessage());
                    }
                    throw cause instanceof RuntimeException e ? e : new CompletionException(cause);
                }
                if (!outcome.released()) {
                    // Timed out: Tenure's timeout already withdrew the wait.
                    throw TextRefusal.status("timeout", "the barrier did not fill in time");
                }
                return "ok";
            });
        });
    }
}
