package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.Effect;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.list.ListCancel;
import io.tenure.core.list.ListPop;
import io.tenure.core.list.ListPush;
import io.tenure.core.list.ListResult;
import io.tenure.core.list.ListReturn;
import io.tenure.core.list.ListWithdraw;
import io.tenure.core.list.ListTable;
import io.tenure.core.list.ListView;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lists against plain {@link ArrayDeque}s, over thousands of seeded command sequences (pushes and
 * pops at both ends, pops that wait and their retries, withdrawals, given-back items, retries of
 * any of them with the same request id, leases revoked while waiting). At every applied index:
 * the same items in the same order, the same waiters in arrival order, a list with waiters always
 * empty, each item handed to exactly one pop (the first waiter), a retry answered as its first copy
 * and applied once, an item answered to a retry never given back; and every 25 commands a snapshot
 * that restores to byte-identical state ({@link ModelRun}).
 */
class ListModelTest {
    private static final String[] NAMES = {"q/a", "q/b"};
    private static final long[] LEASES = {1, 2, 3, 4};

    @Test
    void everyAppliedIndexMatchesTheReferenceModel() {
        ModelRun.run(1_500, 120, LEASES, Model::new);
    }

    private static final class Model extends ModelRun.Model {
        final TreeMap<String, ArrayDeque<String>> lists = new TreeMap<>();
        /** Waiting lease → its pop's request id, in arrival order, per list. */
        final Map<String, LinkedHashMap<Long, Long>> waiting = new HashMap<>();
        final Map<Long, String> pushes = new HashMap<>();
        /** Pop request id → [list, value, state (0 answered, 1 answered again, 2 returned)]. */
        final Map<Long, String[]> pops = new HashMap<>();
        /** Pop request id → the lease it popped (or was handed an item) with. */
        final Map<Long, Long> popLease = new HashMap<>();
        final Set<List<Object>> ended = new HashSet<>();
        final List<Command> sent = new ArrayList<>();
        long nextRequest = 1;
        int nextValue = 1;
        /** The lease the last push or return handed its item to (0: none), and the item. */
        long handedTo;
        String handed;

        @Override
        Command next(Random random, Replica replica, int step) {
            handedTo = 0;
            handed = null;
            String name = NAMES[random.nextInt(NAMES.length)];
            long lease = LEASES[random.nextInt(LEASES.length)];
            int dice = random.nextInt(100);
            Command churn = leaseChurn(dice, 4, lease);
            if (churn != null) {
                return churn;
            }
            long requestId = random.nextInt(4) == 0 ? 0 : nextRequest++;
            Command c;
            if (dice < 16 && !sent.isEmpty()) {
                c = sent.get(random.nextInt(sent.size())); // a retry
            } else if (dice < 45) {
                c = new ListPush(name, bytes("v" + nextValue++), random.nextBoolean(), requestId);
            } else if (dice < 60) {
                c = new ListPop(name, random.nextBoolean(), 0, false, requestId);
            } else if (dice < 80) {
                c = new ListPop(name, random.nextBoolean(), lease, true, requestId);
            } else if (dice < 84) {
                // A timeout's withdrawal: of a waiting pop, or of one a push handed an item to first.
                LinkedHashMap<Long, Long> w = waiting.getOrDefault(name, new LinkedHashMap<>());
                List<Long> answered = new ArrayList<>(popLease.keySet());
                if (!answered.isEmpty() && random.nextBoolean()) {
                    long id = answered.get(random.nextInt(answered.size()));
                    c = new ListWithdraw(pops.get(id)[0], popLease.get(id), id);
                } else {
                    long withdrawn = w.isEmpty() || random.nextBoolean() ? lease : w.keySet().iterator().next();
                    c = new ListWithdraw(name, withdrawn, w.getOrDefault(withdrawn, 0L));
                }
            } else if (dice < 88) {
                LinkedHashMap<Long, Long> w = waiting.getOrDefault(name, new LinkedHashMap<>());
                long withdrawn = w.isEmpty() || random.nextBoolean() ? lease : w.keySet().iterator().next();
                c = new ListCancel(name, withdrawn, w.getOrDefault(withdrawn, 0L));
            } else {
                List<Long> popped = new ArrayList<>(pops.keySet());
                if (popped.isEmpty()) {
                    c = new ListPush(name, bytes("v" + nextValue++), false, requestId);
                } else {
                    long id = popped.get(random.nextInt(popped.size()));
                    String[] p = pops.get(id);
                    c = new ListReturn(p[0], bytes(p[1]), random.nextBoolean(), id);
                }
            }
            if (!(c instanceof ListCancel) && !(c instanceof ListWithdraw) && !sent.contains(c)) {
                sent.add(c);
            }
            return c;
        }

        private static byte[] bytes(String s) {
            return s.getBytes(StandardCharsets.UTF_8);
        }

        private static String text(byte[] b) {
            return new String(b, StandardCharsets.UTF_8);
        }

        @Override
        String applyOwn(Command command) {
            handedTo = 0;
            handed = null;
            if (command instanceof ListPush p) {
                if (p.requestId() != 0 && pushes.containsKey(p.requestId())) {
                    return "Pushed";
                }
                ArrayDeque<String> items = lists.get(p.key());
                if (items != null && items.size() >= ListTable.MAX_LENGTH) {
                    return "Rejected " + Code.FAILED_PRECONDITION;
                }
                offer(p.key(), text(p.value()), p.left());
                if (p.requestId() != 0) {
                    pushes.put(p.requestId(), "pushed");
                }
                return "Pushed";
            }
            if (command instanceof ListPop p) {
                boolean withLease = p.leaseId() != 0 || p.queue();
                if (withLease && !alive.contains(p.leaseId())) {
                    return "Rejected " + Code.NOT_FOUND;
                }
                if (withLease && p.requestId() != 0 && ended.contains(List.of(p.key(), p.leaseId(), p.requestId()))) {
                    return "Rejected " + Code.FAILED_PRECONDITION;
                }
                String[] before = p.requestId() == 0 ? null : pops.get(p.requestId());
                if (before != null && !before[2].equals("2")) {
                    before[2] = "1";
                    return "Popped";
                }
                ArrayDeque<String> items = lists.get(p.key());
                if (items != null && !items.isEmpty()) {
                    String value = p.left() ? items.pollFirst() : items.pollLast();
                    if (items.isEmpty()) {
                        lists.remove(p.key());
                    }
                    if (p.requestId() != 0) {
                        pops.put(p.requestId(), new String[] {p.key(), value, "0"});
                        popLease.put(p.requestId(), p.leaseId());
                    }
                    return "Popped";
                }
                if (!p.queue()) {
                    return "Empty";
                }
                waiting.computeIfAbsent(p.key(), k -> new LinkedHashMap<>()).putIfAbsent(p.leaseId(), p.requestId());
                return "Waiting";
            }
            if (command instanceof ListWithdraw c) {
                String[] p = c.requestId() == 0 ? null : pops.get(c.requestId());
                if (p == null) {
                    if (c.requestId() != 0) {
                        ended.add(List.of(c.key(), c.leaseId(), c.requestId()));
                    }
                } else if (!p[2].equals("2") && popLease.get(c.requestId()) == c.leaseId()) {
                    return "Popped"; // handed an item first: it keeps it, nothing changes
                }
                LinkedHashMap<Long, Long> w = waiting.get(c.key());
                Long request = w == null ? null : w.remove(c.leaseId());
                if (request != null && request != 0) {
                    ended.add(List.of(c.key(), c.leaseId(), request));
                }
                if (w != null && w.isEmpty()) {
                    waiting.remove(c.key());
                }
                return "Left";
            }
            if (command instanceof ListCancel c) {
                if (c.requestId() == 0 || !pops.containsKey(c.requestId())) {
                    if (c.requestId() != 0) {
                        ended.add(List.of(c.key(), c.leaseId(), c.requestId()));
                    }
                }
                LinkedHashMap<Long, Long> w = waiting.get(c.key());
                Long request = w == null ? null : w.remove(c.leaseId());
                if (request != null && request != 0) {
                    ended.add(List.of(c.key(), c.leaseId(), request));
                }
                if (w != null && w.isEmpty()) {
                    waiting.remove(c.key());
                }
                return "Left";
            }
            ListReturn r = (ListReturn) command;
            if (r.requestId() != 0) {
                String[] p = pops.get(r.requestId());
                if (p != null && !p[2].equals("0")) {
                    return "Skipped";
                }
                pops.put(r.requestId(), new String[] {r.key(), "", "2"});
            }
            offer(r.key(), text(r.value()), r.left());
            return "Returned";
        }

        private void offer(String key, String value, boolean left) {
            LinkedHashMap<Long, Long> w = waiting.get(key);
            if (w != null && !w.isEmpty()) {
                long lease = w.keySet().iterator().next();
                long request = w.remove(lease);
                if (w.isEmpty()) {
                    waiting.remove(key);
                }
                if (request != 0) {
                    pops.put(request, new String[] {key, value, "0"});
                    popLease.put(request, lease);
                }
                handedTo = lease;
                handed = value;
                return;
            }
            ArrayDeque<String> items = lists.computeIfAbsent(key, k -> new ArrayDeque<>());
            if (left) {
                items.addFirst(value);
            } else {
                items.addLast(value);
            }
        }

        @Override
        void leaseEnded(long leaseId) {
            for (String key : new ArrayList<>(waiting.keySet())) {
                LinkedHashMap<Long, Long> w = waiting.get(key);
                w.remove(leaseId);
                if (w.isEmpty()) {
                    waiting.remove(key);
                }
            }
        }

        @Override
        String outcome(Result result) {
            return result instanceof Result.Skipped ? "Skipped" : super.outcome(result);
        }

        @Override
        void check(Replica replica, Applied applied, String context) {
            ListTable table = replica.state.primitive(ListTable.class);
            long items = 0;
            for (String name : NAMES) {
                List<String> expected = new ArrayList<>(lists.getOrDefault(name, new ArrayDeque<>()));
                assertThat(table.range(name, 0, -1, Integer.MAX_VALUE)).extracting(Model::text).as(context + " items of " + name)
                        .containsExactlyElementsOf(expected);
                items += expected.size();
                ListView view = table.list(name);
                List<Long> waiters = view == null ? List.of() : view.waiting().stream().map(ListView.Waiter::leaseId).toList();
                assertThat(waiters).as(context + " waiters of " + name)
                        .containsExactlyElementsOf(new ArrayList<>(waiting.getOrDefault(name, new LinkedHashMap<>()).keySet()));
                if (!waiters.isEmpty()) {
                    assertThat(expected).as(context + " a list with waiters is empty").isEmpty();
                }
                assertThat(view == null).as(context + " " + name + " exists exactly while it has items or waiters")
                        .isEqualTo(expected.isEmpty() && waiters.isEmpty());
            }
            assertThat(table.itemCount()).as(context + " items over every list").isEqualTo(items);
            List<Effect.Wake> wakes = Replica.effects(applied, Effect.Wake.class).stream()
                    .filter(w -> w.result() instanceof ListResult.Popped).toList();
            if (handedTo != 0) {
                assertThat(wakes).as(context + " the item handed to the first waiter only").singleElement().satisfies(w -> {
                    ListResult.Popped p = (ListResult.Popped) w.result();
                    assertThat(p.leaseId()).isEqualTo(handedTo);
                    assertThat(text(p.value())).isEqualTo(handed);
                });
            } else {
                assertThat(wakes).as(context + " nobody handed an item").isEmpty();
            }
        }
    }
}
