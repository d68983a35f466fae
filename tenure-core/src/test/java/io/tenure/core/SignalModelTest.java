package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.signal.ListenerView;
import io.tenure.core.signal.SignalListen;
import io.tenure.core.signal.SignalPublish;
import io.tenure.core.signal.SignalResult.Published;
import io.tenure.core.signal.SignalTable;
import io.tenure.core.signal.SignalUnlisten;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Signals against a plain model: listeners in a map, patterns matched by a regular expression
 * written from seed 004's rule, each group's turn a number, retries remembered in a map; every
 * publish's receivers compared, with lease churn and snapshot round trips (ModelRun).
 */
class SignalModelTest {
    private static final String[] CHANNELS = {"a", "a.b", "a.c", "a.b.c", "x.b"};
    private static final String[] PATTERNS = {"a", "a.b", "a.*", "*.b", "a.>", ">", "*.*.c", "x.>", "a..b", "a.>.c"};
    private static final String[] GROUPS = {"", "", "g", "h"};
    private static final long[] LEASES = {1, 2, 3};

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        ModelRun.run(800, 150, LEASES, Model::new);
    }

    private record Listener(long lease, String pattern, String group) {}

    private static final class Model extends ModelRun.Model {
        final TreeMap<Long, Listener> listeners = new TreeMap<>();
        final Map<String, Long> turns = new HashMap<>();
        final Map<List<Object>, Integer> published = new HashMap<>();
        final List<Command> sent = new ArrayList<>();
        long[] expectedReceivers;
        int expectedCount;
        long nextRequest = 1;

        @Override
        Command next(Random random, Replica replica, int step) {
            expectedReceivers = null;
            long lease = LEASES[random.nextInt(LEASES.length)];
            int dice = random.nextInt(100);
            Command churn = leaseChurn(dice, 3, lease);
            if (churn != null) {
                return churn;
            }
            Command c;
            if (dice < 12 && !sent.isEmpty()) {
                c = sent.get(random.nextInt(sent.size()));
            } else if (dice < 45) {
                c = new SignalListen(1 + random.nextInt(12), lease, PATTERNS[random.nextInt(PATTERNS.length)],
                        GROUPS[random.nextInt(GROUPS.length)], random.nextInt(3) == 0 ? 1 + random.nextInt(12) : 0);
            } else if (dice < 55) {
                c = new SignalUnlisten(1 + random.nextInt(12), lease);
            } else {
                c = new SignalPublish(CHANNELS[random.nextInt(CHANNELS.length)], new byte[] {(byte) step},
                        random.nextInt(3) == 0 ? 0 : nextRequest++);
            }
            sent.add(c);
            return c;
        }

        @Override
        String applyOwn(Command command) {
            expectedReceivers = null;
            if (command instanceof SignalListen l) {
                if (!valid(l.pattern())) {
                    return "Rejected " + Code.INVALID_ARGUMENT;
                }
                if (!alive.contains(l.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                Listener existing = listeners.get(l.listenerId());
                if (existing != null && existing.lease() != l.leaseId()) {
                    return "Rejected " + Code.ALREADY_EXISTS;
                }
                listeners.put(l.listenerId(), new Listener(l.leaseId(), l.pattern(), l.group()));
                if (existing != null) {
                    leaveGroup(existing.group(), l.listenerId());
                }
                Listener replaced = l.replaces() == l.listenerId() ? null : listeners.get(l.replaces());
                if (replaced != null && replaced.lease() == l.leaseId()) {
                    listeners.remove(l.replaces());
                    leaveGroup(replaced.group(), l.replaces());
                }
                return "Listening";
            }
            if (command instanceof SignalUnlisten u) {
                Listener existing = listeners.get(u.listenerId());
                if (existing == null) {
                    return "Unlistened";
                }
                if (existing.lease() != u.leaseId()) {
                    return "Rejected " + Code.FAILED_PRECONDITION;
                }
                listeners.remove(u.listenerId());
                leaveGroup(existing.group(), u.listenerId());
                return "Unlistened";
            }
            SignalPublish p = (SignalPublish) command;
            List<Object> request = List.of(p.channel(), p.requestId());
            if (p.requestId() != 0 && published.containsKey(request)) {
                expectedReceivers = new long[0];
                expectedCount = published.get(request);
                return "Published";
            }
            List<Long> receivers = new ArrayList<>();
            TreeMap<String, List<Long>> groups = new TreeMap<>();
            listeners.forEach((id, l) -> {
                if (Pattern.matches(regex(l.pattern()), p.channel())) {
                    if (l.group().isEmpty()) {
                        receivers.add(id);
                    } else {
                        groups.computeIfAbsent(l.group(), g -> new ArrayList<>()).add(id);
                    }
                }
            });
            groups.forEach((group, members) -> {
                long turn = turns.getOrDefault(group, 0L);
                receivers.add(members.get((int) (turn % members.size())));
                turns.put(group, turn + 1);
            });
            expectedReceivers = receivers.stream().mapToLong(Long::longValue).sorted().toArray();
            expectedCount = expectedReceivers.length;
            if (p.requestId() != 0) {
                published.put(request, expectedCount);
            }
            return "Published";
        }

        /** A group with no member left forgets its turn. */
        private void leaveGroup(String group, long id) {
            if (!group.isEmpty() && listeners.values().stream().noneMatch(l -> l.group().equals(group))) {
                turns.remove(group);
            }
        }

        @Override
        void leaseEnded(long leaseId) {
            List<Long> gone = listeners.entrySet().stream().filter(e -> e.getValue().lease() == leaseId).map(Map.Entry::getKey).toList();
            for (long id : gone) {
                Listener l = listeners.remove(id);
                leaveGroup(l.group(), id);
            }
        }

        @Override
        void check(Replica replica, Applied applied, String context) {
            SignalTable table = replica.state.primitive(SignalTable.class);
            List<ListenerView> expected = new ArrayList<>();
            listeners.forEach((id, l) -> expected.add(new ListenerView(id, l.lease(), l.pattern(), l.group())));
            assertThat(table.listeners(1_000)).as(context).isEqualTo(expected);
            if (expectedReceivers != null) {
                Published p = (Published) applied.result();
                assertThat(p.receivers()).as(context + " receivers").containsExactly(expectedReceivers);
                assertThat(p.receiverCount()).as(context + " receiver count").isEqualTo(expectedCount);
            }
        }

        private static boolean valid(String pattern) {
            return !pattern.contains("..") && !pattern.matches(".*>\\..*");
        }

        private static String regex(String pattern) {
            StringBuilder r = new StringBuilder();
            String[] parts = pattern.split("\\.", -1);
            for (int i = 0; i < parts.length; i++) {
                r.append(i > 0 ? "\\." : "").append(switch (parts[i]) {
                    case "*" -> "[^.]+";
                    case ">" -> "[^.]+(\\.[^.]+)*";
                    default -> Pattern.quote(parts[i]);
                });
            }
            return r.toString();
        }
    }
}
