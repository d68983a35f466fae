package io.tenure.server.watch;

import io.tenure.core.access.Level;
import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Effect;
import io.tenure.core.watch.KeyPattern;
import io.tenure.core.watch.WatchEvent;
import io.tenure.server.PacedQueue;
import io.tenure.server.PermissionDenied;
import io.tenure.server.raft.TenureStateMachine;
import io.tenure.server.security.Permissions;
import io.tenure.server.security.Principal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;

/**
 * Delivers watch events from the applied state to watchers, in revision order, with no gap and
 * no duplicate (I10): a new watch replays the event log from its start revision and then receives
 * live events strictly after the revision it replayed up to.
 *
 * <p>Each watcher has a queue drained at the pace its transport accepts; a watcher that falls more
 * than {@link #MAX_PENDING} events behind is cancelled with a reason instead of growing memory.
 */
public final class WatchHub {
    /** Undelivered events one watcher may have before it is cancelled as too slow. */
    public static final int MAX_PENDING = 100_000;

    /** Where a watcher's events go: one transport stream. Calls come from one thread at a time per watcher. */
    public interface Sink {
        void send(List<WatchEvent> events);

        /** Whether the transport takes more now. */
        boolean ready();

        /** The watch ended on the server's side (too slow, shutting down). */
        void cancelled(String reason);
    }

    /** A registered watch. */
    public final class Watcher {
        private final String key;
        private final boolean prefix;
        private final KeyPattern pattern; // null: a key or prefix watch
        private final Sink sink;
        private final long after;
        private final PacedQueue<WatchEvent> queue;

        private Watcher(String key, boolean prefix, KeyPattern pattern, long after, Sink sink) {
            this.key = key;
            this.prefix = prefix;
            this.pattern = pattern;
            this.after = after;
            this.sink = sink;
            this.queue = new PacedQueue<>(MAX_PENDING, delivery, new PacedQueue.Transport<>() {
                @Override
                public void send(List<WatchEvent> batch) {
                    sink.send(batch);
                }

                @Override
                public boolean ready() {
                    return sink.ready();
                }
            });
        }

        boolean matches(String k) {
            if (pattern != null) {
                return pattern.matches(k);
            }
            return prefix ? k.startsWith(key) : k.equals(key);
        }

        /** Whether events are tested against it one by one (a prefix or pattern watch), rather than found by key. */
        boolean scanned() {
            return prefix || pattern != null;
        }

        /** The transport can take more: resume delivery. */
        public void resume() {
            queue.resume();
        }

        /** The client cancelled the watch or went away. */
        public void close() {
            queue.close();
            remove(this);
        }
    }

    /** The outcome of opening a watch: the watcher, or the compaction horizon when the start is too old. */
    public record Opened(Watcher watcher, long compactRevision) {}

    private final TenureStateMachine stateMachine;
    private final Executor delivery;
    private final Permissions permissions;
    private final ConcurrentHashMap<String, Set<Watcher>> byKey = new ConcurrentHashMap<>();
    /** Prefix and pattern watches: each event is tested against each. */
    private final CopyOnWriteArrayList<Watcher> byPrefix = new CopyOnWriteArrayList<>();

    public WatchHub(TenureStateMachine stateMachine, Permissions permissions, Executor delivery) {
        this.stateMachine = stateMachine;
        this.delivery = delivery;
        this.permissions = permissions;
    }

    /**
     * Opens a watch on {@code key} (or every key starting with it) delivering events with revision
     * {@code >= startRevision}; 0 means from the next change on. {@code caller} needs read on
     * {@code key} for each of the {@code kinds} whose events it takes (its front end filters them),
     * or on every kind ({@value Permissions#EVERY_KIND}) when {@code kinds} is empty.
     *
     * @throws io.tenure.server.PermissionDenied when it may not
     */
    public Opened open(Principal caller, java.util.Set<String> kinds, String key, boolean prefix, long startRevision, Sink sink) {
        requireRead(caller, kinds, key);
        return open(key, prefix, null, startRevision, sink);
    }

    /**
     * Opens a watch on every name {@code pattern} matches (seed 004's tokens, {@code *} and a last
     * {@code >}), of every kind, delivering events with revision {@code >= startRevision}.
     */
    public Opened open(Principal caller, java.util.Set<String> kinds, KeyPattern pattern, long startRevision, Sink sink) {
        requireRead(caller, kinds, pattern.literalPrefix());
        return open("", false, pattern, startRevision, sink);
    }

    private void requireRead(Principal caller, java.util.Set<String> kinds, String prefix) {
        if (kinds.isEmpty()) {
            permissions.require(caller, Permissions.EVERY_KIND, prefix, Level.READ);
        }
        for (String kind : new java.util.TreeSet<>(kinds)) {
            permissions.require(caller, Permissions.kind(kind), prefix, Level.READ);
        }
    }

    private Opened open(String key, boolean prefix, KeyPattern pattern, long startRevision, Sink sink) {
        return stateMachine.read(state -> {
            long now = state.revision();
            Watcher w = new Watcher(key, prefix, pattern, Math.max(now, startRevision - 1), sink);
            if (startRevision > 0 && startRevision <= now) {
                boolean complete = state.events().replay(startRevision, w::matches, w.queue::add);
                if (!complete) {
                    return new Opened(null, state.events().horizon());
                }
            }
            // Registered while apply is excluded: every later event has a revision above `now`.
            if (w.scanned()) {
                byPrefix.add(w);
            } else {
                byKey.computeIfAbsent(key, k -> ConcurrentHashMap.newKeySet()).add(w);
            }
            w.queue.resume();
            return new Opened(w, 0);
        });
    }

    /** Hands the watch events of an applied entry to their watchers; called on the apply thread. */
    public void applied(List<Applied> results) {
        if (byKey.isEmpty() && byPrefix.isEmpty()) {
            return;
        }
        for (Applied applied : results) {
            for (Effect effect : applied.effects()) {
                if (effect instanceof Effect.Watched watched) {
                    WatchEvent event = watched.event();
                    Set<Watcher> exact = byKey.get(event.key());
                    if (exact != null) {
                        exact.forEach(w -> offer(w, event));
                    }
                    for (Watcher w : byPrefix) {
                        if (w.matches(event.key())) {
                            offer(w, event);
                        }
                    }
                }
            }
        }
    }

    public int watcherCount() {
        return byPrefix.size() + byKey.values().stream().mapToInt(Set::size).sum();
    }

    /** Ends every watch (the member is stopping). */
    public void closeAll(String reason) {
        List<Watcher> all = new ArrayList<>(byPrefix);
        byKey.values().forEach(all::addAll);
        for (Watcher w : all) {
            w.close();
            w.sink.cancelled(reason);
        }
    }

    private void offer(Watcher w, WatchEvent event) {
        if (event.revision() <= w.after || w.queue.isClosed()) {
            return;
        }
        if (!w.queue.offer(event)) {
            w.close();
            w.sink.cancelled("watcher fell more than " + MAX_PENDING + " events behind; restart it from the revision after the last one received");
        }
    }

    private void remove(Watcher w) {
        if (w.scanned()) {
            byPrefix.remove(w);
        } else {
            byKey.computeIfPresent(w.key, (k, set) -> {
                set.remove(w);
                return set.isEmpty() ? null : set;
            });
        }
    }
}
