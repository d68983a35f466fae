package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.LeaseExpire;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.kernel.Result;
import io.tenure.core.kv.KvCompareAndSet;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvExpire;
import io.tenure.core.kv.KvPage;
import io.tenure.core.kv.KvPut;
import io.tenure.core.kv.KvResult;
import io.tenure.core.kv.KvTable;
import io.tenure.core.kv.KvTtl;
import io.tenure.core.kv.KvView;
import io.tenure.core.watch.WatchEvent;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The key-value store against a plain {@link HashMap} reference model, over seeded command
 * sequences: puts (bound to live and dead leases, with TTLs, both, values at and over the limit),
 * compare-and-sets by revision (0 = absent, the current one, a stale one) and by value, deletes
 * unconditional and conditional, expiries at the current and at stale mod revisions, leases
 * revoked, expired and granted again, and retries of earlier requests with the same request id.
 * After every command: the same answer (revisions included, predicted from the log position),
 * the same watch events, and the same keys through {@code get}, {@code page} (random prefixes,
 * continuations and limits), {@code keyCount} and {@code ttlKeys}. At random points the state is
 * written to a snapshot and read into a fresh state, which must write the same bytes and read the
 * same; half the time the sequence goes on from the restored state, so that the retry memo,
 * lease bindings and TTLs must survive it.
 */
class KvModelTest {
    private static final String[] KEYS = {"a", "a/1", "a/2", "a/10", "b/x", "b/y", "c"};
    private static final String[] PREFIXES = {"", "a", "a/", "a/1", "b/", "c", "d"};
    private static final long[] LEASES = {1, 2, 3};
    private static final byte[][] VALUES = {new byte[0], {1}, {2}, {1, 2}, {7, 7, 7}};

    @Test
    void everyStepMatchesTheReferenceModel() {
        for (long seed = 1; seed <= 300; seed++) {
            run(seed, 200);
        }
    }

    /** One key in the model. */
    private record Entry(byte[] value, long createRevision, long modRevision, long version, long leaseId, long ttlMillis) {}

    /** The rules written out once more, simply, over a HashMap (sorted only when read in order). */
    private static final class Model {
        final Map<String, Entry> keys = new HashMap<>();
        final Set<Long> alive = new HashSet<>();
        /** "key op requestId" → the first answer's outcome: kind, revisions (a failed comparison's value is not remembered). */
        final Map<String, Object[]> answered = new HashMap<>();
        final List<Command> requests = new ArrayList<>();
        /** The events the last command should have produced, rendered. */
        final List<String> events = new ArrayList<>();

        String apply(Command command, long position) {
            events.clear();
            if (command instanceof LeaseGrant g) {
                alive.add(g.leaseId());
                return "LeaseGranted";
            }
            if (command instanceof LeaseRevoke r) {
                return alive.remove(r.leaseId()) ? leaseEnded(r.leaseId(), position) : "Rejected NOT_FOUND";
            }
            if (command instanceof LeaseExpire e) {
                alive.remove(e.leaseId());
                return leaseEnded(e.leaseId(), position);
            }
            if (command instanceof KvPut p) {
                String problem = problem(p.key(), p.value(), p.leaseId(), p.ttlMillis());
                if (problem != null) {
                    return problem;
                }
                String before = recall(p.key(), "put", p.requestId());
                if (before != null) {
                    return before;
                }
                if (p.leaseId() != 0 && !alive.contains(p.leaseId())) {
                    return "Rejected NOT_FOUND";
                }
                return remember(p.key(), "put", p.requestId(), put(p.key(), p.value(), p.leaseId(), p.ttlMillis(), position));
            }
            if (command instanceof KvCompareAndSet c) {
                String problem = problem(c.key(), c.newValue(), c.leaseId(), c.ttlMillis());
                if (problem != null) {
                    return problem;
                }
                if (c.expectedModRevision() < 0 && c.expectedValue() == null) {
                    return "Rejected INVALID_ARGUMENT";
                }
                String before = recall(c.key(), "cas", c.requestId());
                if (before != null) {
                    return before;
                }
                if (c.leaseId() != 0 && !alive.contains(c.leaseId())) {
                    return "Rejected NOT_FOUND";
                }
                Entry entry = keys.get(c.key());
                boolean matches = c.expectedModRevision() >= 0
                        ? (entry == null ? 0 : entry.modRevision()) == c.expectedModRevision()
                        : entry != null && Arrays.equals(entry.value(), c.expectedValue());
                Object[] answer = matches ? put(c.key(), c.newValue(), c.leaseId(), c.ttlMillis(), position) : failed(c.key());
                return remember(c.key(), "cas", c.requestId(), answer);
            }
            if (command instanceof KvDelete d) {
                String before = recall(d.key(), "delete", d.requestId());
                if (before != null) {
                    return before;
                }
                Entry entry = keys.get(d.key());
                if (d.expectedModRevision() >= 0 && (entry == null ? 0 : entry.modRevision()) != d.expectedModRevision()) {
                    return remember(d.key(), "delete", d.requestId(), failed(d.key()));
                }
                if (entry == null) {
                    return remember(d.key(), "delete", d.requestId(), new Object[] {"Deleted false 0"});
                }
                remove(d.key(), position);
                return remember(d.key(), "delete", d.requestId(), new Object[] {"Deleted true " + position});
            }
            if (command instanceof KvExpire e) {
                Entry entry = keys.get(e.key());
                if (entry == null || entry.ttlMillis() == 0 || entry.modRevision() != e.modRevision()) {
                    return "Skipped";
                }
                remove(e.key(), position);
                return "Expired " + position;
            }
            throw new IllegalArgumentException("unexpected " + command);
        }

        private static String problem(String key, byte[] value, long leaseId, long ttlMillis) {
            boolean bad = key.isEmpty() || value.length > KvTable.MAX_VALUE_BYTES || ttlMillis < 0
                    || ttlMillis > Limits.MAX_TTL_MILLIS || (leaseId != 0 && ttlMillis != 0);
            return bad ? "Rejected INVALID_ARGUMENT" : null;
        }

        private Object[] put(String key, byte[] value, long leaseId, long ttlMillis, long revision) {
            Entry before = keys.get(key);
            Entry after = before == null
                    ? new Entry(value.clone(), revision, revision, 1, leaseId, ttlMillis)
                    : new Entry(value.clone(), before.createRevision(), revision, before.version() + 1, leaseId, ttlMillis);
            keys.put(key, after);
            events.add("PUT " + key + " " + revision + " " + Arrays.toString(value) + " lease " + leaseId + " create "
                    + after.createRevision() + " version " + after.version() + " before " + (before == null ? "none" : before.modRevision()));
            return new Object[] {"Put " + revision + " " + (before == null ? 0 : before.modRevision()) + " " + after.version()};
        }

        private Object[] failed(String key) {
            Entry entry = keys.get(key);
            return new Object[] {"CompareFailed", entry == null ? 0L : entry.modRevision()};
        }

        private void remove(String key, long revision) {
            Entry before = keys.remove(key);
            events.add("DELETE " + key + " " + revision + " before " + before.modRevision());
        }

        private String leaseEnded(long leaseId, long position) {
            List<String> bound = keys.entrySet().stream().filter(e -> e.getValue().leaseId() == leaseId)
                    .map(Map.Entry::getKey).sorted().toList();
            long revision = position;
            for (String key : bound) {
                remove(key, revision++);
            }
            return "LeaseEnded";
        }

        private String recall(String key, String op, long requestId) {
            Object[] answer = requestId == 0 ? null : answered.get(key + " " + op + " " + requestId);
            return answer == null ? null : render(key, answer);
        }

        private String remember(String key, String op, long requestId, Object[] answer) {
            if (requestId != 0) {
                answered.put(key + " " + op + " " + requestId, answer);
            }
            return render(key, answer);
        }

        /** A failed comparison shows the value only while the key is at the mod revision answered. */
        private String render(String key, Object[] answer) {
            if (!answer[0].equals("CompareFailed")) {
                return (String) answer[0];
            }
            long modRevision = (Long) answer[1];
            Entry entry = keys.get(key);
            boolean unchanged = entry != null && entry.modRevision() == modRevision;
            return "CompareFailed " + modRevision + " " + (unchanged ? Arrays.toString(entry.value()) : "null");
        }
    }

    private static String outcome(Result result) {
        if (result instanceof KvResult.Put p) {
            return "Put " + p.revision() + " " + p.prevModRevision() + " " + p.version();
        } else if (result instanceof KvResult.CompareFailed f) {
            return "CompareFailed " + f.modRevision() + " " + (f.value() == null ? "null" : Arrays.toString(f.value()));
        } else if (result instanceof KvResult.Deleted d) {
            return "Deleted " + d.existed() + " " + d.revision();
        } else if (result instanceof KvResult.Expired e) {
            return "Expired " + e.revision();
        } else if (result instanceof Result.Rejected r) {
            return "Rejected " + r.code();
        } else if (result instanceof Result.Skipped) {
            return "Skipped";
        }
        return result.getClass().getSimpleName();
    }

    private static String event(WatchEvent e) {
        assertThat(e.kind()).isEqualTo(KvTable.NAME);
        if (e.type() == WatchEvent.Type.DELETE) {
            assertThat(e.kv().modRevision()).isEqualTo(e.revision());
            return "DELETE " + e.key() + " " + e.revision() + " before " + e.prevKv().modRevision();
        }
        assertThat(e.kv().modRevision()).isEqualTo(e.revision());
        return "PUT " + e.key() + " " + e.revision() + " " + Arrays.toString(e.kv().metadata()) + " lease " + e.kv().leaseId()
                + " create " + e.kv().createRevision() + " version " + e.kv().version()
                + " before " + (e.prevKv() == null ? "none" : e.prevKv().modRevision());
    }

    private static void run(long seed, int steps) {
        Random random = new Random(seed);
        Replica replica = new Replica();
        Model model = new Model();
        for (long lease : LEASES) {
            replica.grantLease(lease);
            model.alive.add(lease);
        }
        for (int step = 0; step < steps; step++) {
            Command command = next(random, replica, model);
            long position = replica.nextPosition();
            Applied applied = replica.apply(command);
            String context = "seed " + seed + " step " + step + " " + Rendering.of(command);
            String expected = model.apply(command, position);
            assertThat(outcome(applied.result())).as(context).isEqualTo(expected);
            assertThat(Replica.watched(applied).stream().map(KvModelTest::event).toList()).as(context + " events")
                    .containsExactlyElementsOf(model.events);
            check(replica.state, model, random, context);
            if (random.nextInt(15) == 0) {
                byte[] snapshot = replica.snapshot();
                Replica restored = Replica.restore(snapshot);
                assertThat(restored.snapshot()).as(context + " snapshot round trip").isEqualTo(snapshot);
                check(restored.state, model, random, context + " restored");
                KvTable before = replica.state.primitive(KvTable.class);
                KvTable after = restored.state.primitive(KvTable.class);
                assertThat(Rendering.of(after.page("", "", Limits.MAX_LIST))).isEqualTo(Rendering.of(before.page("", "", Limits.MAX_LIST)));
                assertThat(after.ttlKeys()).isEqualTo(before.ttlKeys());
                for (long lease : LEASES) {
                    assertThat(after.keysOf(lease)).as(context + " keys of lease " + lease).isEqualTo(before.keysOf(lease));
                }
                if (random.nextBoolean()) {
                    replica = restored;
                }
            }
        }
    }

    private static Command next(Random random, Replica replica, Model model) {
        String key = KEYS[random.nextInt(KEYS.length)];
        long lease = LEASES[random.nextInt(LEASES.length)];
        int dice = random.nextInt(100);
        if (!model.requests.isEmpty() && dice < 10) {
            return model.requests.get(random.nextInt(model.requests.size())); // a retry, maybe much later
        }
        if (dice < 13) {
            return new LeaseRevoke(lease);
        }
        if (dice < 15 && model.alive.contains(lease)) {
            return new LeaseExpire(lease, replica.state.renewedAt(lease));
        }
        if (dice < 20) {
            return new LeaseGrant(lease, Replica.TTL_MILLIS, Replica.clientOf(lease));
        }
        KvView current = replica.state.primitive(KvTable.class).get(key);
        long modRevision = current == null ? 0 : current.modRevision();
        long requestId = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(1_000_000);
        Command command;
        if (dice < 50) {
            command = new KvPut(key, value(random), leaseOf(random, lease), 0, requestId);
            if (random.nextInt(5) == 0) {
                command = new KvPut(key, value(random), 0, ttl(random), requestId);
            }
        } else if (dice < 72) {
            int mode = random.nextInt(5);
            long expected = switch (mode) {
                case 0 -> 0;
                case 1 -> modRevision;
                case 2 -> Math.max(0, modRevision - 1 - random.nextInt(3));
                default -> -1;
            };
            byte[] expectedValue = expected >= 0 ? null
                    : mode == 3 && current != null ? current.value() : random.nextInt(10) == 0 ? null : VALUES[random.nextInt(VALUES.length)];
            boolean withTtl = random.nextInt(5) == 0;
            command = new KvCompareAndSet(key, expected, expectedValue, value(random), withTtl ? 0 : leaseOf(random, lease),
                    withTtl ? ttl(random) : 0, requestId);
        } else if (dice < 87) {
            long expected = switch (random.nextInt(4)) {
                case 0 -> modRevision;
                case 1 -> Math.max(0, modRevision - 1);
                default -> KvDelete.ANY_REVISION;
            };
            command = new KvDelete(key, expected, requestId);
        } else {
            KvTtl due = null;
            List<KvTtl> ttls = replica.state.primitive(KvTable.class).ttlKeys();
            if (!ttls.isEmpty() && random.nextBoolean()) {
                due = ttls.get(random.nextInt(ttls.size()));
            }
            return due != null ? new KvExpire(due.key(), due.modRevision() - (random.nextInt(4) == 0 ? 1 : 0))
                    : new KvExpire(key, modRevision);
        }
        if (requestId != 0) {
            model.requests.add(command);
        }
        return command;
    }

    private static long leaseOf(Random random, long lease) {
        int dice = random.nextInt(10);
        return dice < 5 ? 0 : dice < 9 ? lease : 99; // 99 was never granted
    }

    private static long ttl(Random random) {
        return switch (random.nextInt(8)) {
            case 0 -> -1;
            case 1 -> Limits.MAX_TTL_MILLIS + 1;
            default -> 1 + random.nextInt(60_000);
        };
    }

    private static byte[] value(Random random) {
        if (random.nextInt(60) == 0) {
            return new byte[KvTable.MAX_VALUE_BYTES + random.nextInt(2)];
        }
        return VALUES[random.nextInt(VALUES.length)].clone();
    }

    /** Every read the server uses, against the model. */
    private static void check(TenureState state, Model model, Random random, String context) {
        KvTable kv = state.primitive(KvTable.class);
        assertThat(kv.keyCount()).as(context + " key count").isEqualTo(model.keys.size());
        for (String key : KEYS) {
            Entry entry = model.keys.get(key);
            KvView view = kv.get(key);
            if (entry == null) {
                assertThat(view).as(context + " " + key + " absent").isNull();
                continue;
            }
            assertThat(view).as(context + " " + key).isNotNull();
            assertThat(Rendering.of(view)).as(context + " " + key).isEqualTo(Rendering.of(new KvView(key, entry.value(),
                    entry.createRevision(), entry.modRevision(), entry.version(), entry.leaseId(), entry.ttlMillis())));
        }
        List<String> sorted = model.keys.keySet().stream().sorted().toList();
        assertThat(kv.ttlKeys()).as(context + " TTL keys").isEqualTo(sorted.stream().filter(k -> model.keys.get(k).ttlMillis() != 0)
                .map(k -> new KvTtl(k, model.keys.get(k).modRevision(), model.keys.get(k).ttlMillis())).toList());
        for (long lease : LEASES) {
            assertThat(kv.keysOf(lease)).as(context + " keys of lease " + lease)
                    .isEqualTo(sorted.stream().filter(k -> model.keys.get(k).leaseId() == lease).toList());
        }
        String prefix = PREFIXES[random.nextInt(PREFIXES.length)];
        int limit = 1 + random.nextInt(4);
        List<String> listed = new ArrayList<>();
        String after = random.nextInt(4) == 0 ? KEYS[random.nextInt(KEYS.length)] : "";
        List<String> expected = sorted.stream().filter(k -> k.startsWith(prefix) && k.compareTo(after) > 0).toList();
        for (int pages = 0; ; pages++) {
            KvPage page = kv.page(prefix, listed.isEmpty() ? after : listed.get(listed.size() - 1), limit);
            assertThat(page.entries().size()).as(context + " page size").isLessThanOrEqualTo(limit);
            page.entries().forEach(v -> listed.add(v.key()));
            if (!page.more()) {
                break;
            }
            assertThat(page.entries()).as(context + " a page with more is full").hasSize(limit);
            assertThat(pages).as(context + " pages").isLessThan(KEYS.length);
        }
        assertThat(listed).as(context + " listing '" + prefix + "' after '" + after + "' by " + limit).isEqualTo(expected);
    }
}
