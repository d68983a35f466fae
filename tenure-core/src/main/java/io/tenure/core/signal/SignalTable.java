package io.tenure.core.signal;

import io.tenure.core.Limits;
import io.tenure.core.SnapshotFormatException;
import io.tenure.core.kernel.ApplyContext;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.CommandType;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Primitive;
import io.tenure.core.kernel.Result;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.kernel.RetryMemo;
import io.tenure.core.kernel.Wire;
import io.tenure.core.signal.SignalResult.Listening;
import io.tenure.core.signal.SignalResult.Published;
import io.tenure.core.signal.SignalResult.Unlistened;
import io.tenure.core.watch.KeyPattern;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Signals (seed 004's {@code listen}/{@code signal}, Redisson's RTopic, NATS queue groups): who
 * listens to which channels, and to whom each published signal goes. Signals themselves are not
 * stored: a publish is decided here, at its place in the log, and delivered by each member to the
 * receivers connected to it; a listener that is not connected when its signal is applied misses it.
 *
 * <p>Deciding receivers in the replicated state is what makes a listener on any member receive
 * what is published on any member, in log order (so in publish order per channel), with a
 * receiver count that is the same wherever it is read, and a queue group's turn that no two
 * members can disagree on: each group has a turn counter, and a signal goes to the group's
 * {@code turn mod n}-th matching member in id order, then the turn moves on.
 *
 * <p>A listener is bound to a lease and goes when the lease ends. Limits: {@value #MAX_LISTENERS}
 * listeners in all, {@value #MAX_LISTENERS_PER_LEASE} per lease, payloads of
 * {@value Limits#MAX_METADATA_BYTES} bytes. A publish that names its request is delivered once:
 * a retry (among the last {@value #RECENT_REQUESTS}) gets the first copy's receiver count.
 */
public final class SignalTable implements Primitive {
    /** The most listeners registered at once. */
    public static final int MAX_LISTENERS = 100_000;
    /** The most listeners one lease may have (dflockd's {@code --max-subscriptions} per connection). */
    public static final int MAX_LISTENERS_PER_LEASE = 1_024;
    /** The largest payload, in bytes. */
    public static final int MAX_PAYLOAD_BYTES = Limits.MAX_METADATA_BYTES;
    /** How many publishes are remembered with their receiver counts, for their retries. */
    public static final int RECENT_REQUESTS = 8_192;
    private static final int MAX_FIELD_BYTES = 1 << 20;

    /** Its name: its snapshot section. Never changes. */
    public static final String NAME = "signal";
    /** Its commands' log tags, 60 to 69 (never reuse one). */
    public static final Kind KIND = new Kind(NAME, List.of(
            new CommandType<>(60, SignalListen.class, (c, out) -> {
                out.writeLong(c.listenerId());
                out.writeLong(c.leaseId());
                Wire.writeString(out, c.pattern());
                Wire.writeString(out, c.group());
                out.writeLong(c.replaces());
            }, in -> new SignalListen(in.readLong(), in.readLong(), Wire.readString(in, MAX_FIELD_BYTES), Wire.readString(in, MAX_FIELD_BYTES),
                    in.readLong())),
            new CommandType<>(61, SignalUnlisten.class, (c, out) -> {
                out.writeLong(c.listenerId());
                out.writeLong(c.leaseId());
            }, in -> new SignalUnlisten(in.readLong(), in.readLong())),
            new CommandType<>(62, SignalPublish.class, (c, out) -> {
                Wire.writeString(out, c.channel());
                Wire.writeBytes(out, c.payload());
                out.writeLong(c.requestId());
            }, in -> new SignalPublish(Wire.readString(in, MAX_FIELD_BYTES), Wire.readBytes(in, MAX_FIELD_BYTES), in.readLong()))));

    private record Listener(long id, long leaseId, KeyPattern pattern, String group) {}

    /** One publish of one client: a retry names the same. */
    private record Request(String channel, long requestId) {}

    private final Leases leases;
    private final TreeMap<Long, Listener> listeners = new TreeMap<>();
    private final TreeMap<Long, TreeSet<Long>> byLease = new TreeMap<>();
    /** Listeners whose pattern is a literal, by channel: a publish finds them without a scan. */
    private final HashMap<String, TreeSet<Long>> byChannel = new HashMap<>();
    /** Listeners whose pattern has a wildcard, by id: a publish tests each. */
    private final TreeMap<Long, Listener> wildcards = new TreeMap<>();
    /** Each group with a member: its member count and its turn. */
    private final TreeMap<String, long[]> groups = new TreeMap<>();
    private final RetryMemo<Request, Integer> recentRequests = new RetryMemo<>(RECENT_REQUESTS);

    public SignalTable(Leases leases) {
        this.leases = leases;
    }

    /** Signals are delivered to their listeners, not watched: a publish changes no name. */
    @Override
    public boolean watched() {
        return false;
    }

    @Override
    public Kind kind() {
        return KIND;
    }

    @Override
    public Result apply(ApplyContext context, Command command) {
        if (!(command instanceof SignalCommand c)) {
            throw new IllegalArgumentException("not a signal command: " + command.getClass().getName());
        }
        if (c instanceof SignalListen listen) {
            return listen(listen);
        } else if (c instanceof SignalUnlisten unlisten) {
            return unlisten(unlisten);
        }
        return publish((SignalPublish) c);
    }

    private Result listen(SignalListen c) {
        String problem = checkListen(c);
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        if (leases.get(c.leaseId()) == null) {
            return new Result.Rejected(Code.NOT_FOUND, Leases.notFound(c.leaseId()));
        }
        Listener existing = listeners.get(c.listenerId());
        if (existing != null && existing.leaseId() != c.leaseId()) {
            return new Result.Rejected(Code.ALREADY_EXISTS, "listener_id " + c.listenerId() + " is taken by another lease's listener");
        }
        if (existing == null) {
            if (listeners.size() >= MAX_LISTENERS) {
                return new Result.Rejected(Code.FAILED_PRECONDITION, "there are " + MAX_LISTENERS + " listeners, the most there may be");
            }
            TreeSet<Long> ofLease = byLease.get(c.leaseId());
            if (ofLease != null && ofLease.size() >= MAX_LISTENERS_PER_LEASE) {
                return new Result.Rejected(Code.FAILED_PRECONDITION, "lease " + c.leaseId() + " has " + MAX_LISTENERS_PER_LEASE
                        + " listeners, the most one lease may have");
            }
        }
        Listener moved = new Listener(c.listenerId(), c.leaseId(), KeyPattern.parse("pattern", c.pattern()), c.group());
        if (existing == null) {
            add(moved);
        } else {
            // A listener staying in its group keeps the group's turn, even as its only member.
            long[] stays = c.group().isEmpty() || !existing.group().equals(c.group()) ? null : groups.get(c.group());
            if (stays != null) {
                stays[0]++;
            }
            remove(existing);
            add(moved);
            if (stays != null) {
                stays[0]--;
            }
        }
        Listener replaced = c.replaces() == c.listenerId() ? null : listeners.get(c.replaces());
        if (replaced != null && replaced.leaseId() == c.leaseId()) {
            remove(replaced);
        }
        return new Listening(c.listenerId(), c.pattern(), c.group());
    }

    /** @return null when the listen is well formed, else the problem, naming the field */
    public static String checkListen(SignalListen c) {
        if (c.listenerId() == 0) {
            return "listener_id must not be 0";
        }
        String problem = KeyPattern.check("pattern", c.pattern());
        if (problem == null && !c.group().isEmpty()) {
            problem = Limits.checkKey("group", c.group());
        }
        return problem;
    }

    /** @return null when the publish is well formed, else the problem, naming the field */
    public static String checkPublish(String channel, byte[] payload) {
        String problem = KeyPattern.checkLiteral("channel", channel);
        if (problem == null && payload.length > MAX_PAYLOAD_BYTES) {
            problem = "payload is " + payload.length + " bytes, over the limit of " + MAX_PAYLOAD_BYTES;
        }
        return problem;
    }

    private Result unlisten(SignalUnlisten c) {
        Listener existing = listeners.get(c.listenerId());
        if (existing == null) {
            return new Unlistened(c.listenerId(), false);
        }
        if (existing.leaseId() != c.leaseId()) {
            return new Result.Rejected(Code.FAILED_PRECONDITION, "listener " + c.listenerId() + " belongs to another lease than "
                    + c.leaseId());
        }
        remove(existing);
        return new Unlistened(c.listenerId(), true);
    }

    private Result publish(SignalPublish c) {
        String problem = checkPublish(c.channel(), c.payload());
        if (problem != null) {
            return new Result.Rejected(Code.INVALID_ARGUMENT, problem);
        }
        Request request = new Request(c.channel(), c.requestId());
        if (c.requestId() != 0) {
            Integer count = recentRequests.recall(request);
            if (count != null) {
                return new Published(c.channel(), c.payload(), new long[0], count, true);
            }
        }
        TreeSet<Long> receivers = new TreeSet<>();
        TreeMap<String, List<Long>> grouped = new TreeMap<>();
        TreeSet<Long> literal = byChannel.get(c.channel());
        if (literal != null) {
            for (long id : literal) {
                choose(listeners.get(id), receivers, grouped);
            }
        }
        for (Listener l : wildcards.values()) {
            if (l.pattern().matches(c.channel())) {
                choose(l, receivers, grouped);
            }
        }
        for (Map.Entry<String, List<Long>> group : grouped.entrySet()) {
            List<Long> members = group.getValue();
            members.sort(null);
            long[] state = groups.get(group.getKey());
            receivers.add(members.get((int) Long.remainderUnsigned(state[1], members.size())));
            state[1]++;
        }
        long[] ids = receivers.stream().mapToLong(Long::longValue).toArray();
        if (c.requestId() != 0) {
            recentRequests.remember(request, ids.length);
        }
        return new Published(c.channel(), c.payload(), ids, ids.length, false);
    }

    private static void choose(Listener l, TreeSet<Long> receivers, TreeMap<String, List<Long>> grouped) {
        if (l.group().isEmpty()) {
            receivers.add(l.id());
        } else {
            grouped.computeIfAbsent(l.group(), g -> new ArrayList<>()).add(l.id());
        }
    }

    private void add(Listener l) {
        listeners.put(l.id(), l);
        byLease.computeIfAbsent(l.leaseId(), k -> new TreeSet<>()).add(l.id());
        if (l.pattern().isLiteral()) {
            byChannel.computeIfAbsent(l.pattern().text(), k -> new TreeSet<>()).add(l.id());
        } else {
            wildcards.put(l.id(), l);
        }
        if (!l.group().isEmpty()) {
            groups.computeIfAbsent(l.group(), g -> new long[2])[0]++;
        }
    }

    private void remove(Listener l) {
        listeners.remove(l.id());
        TreeSet<Long> ofLease = byLease.get(l.leaseId());
        ofLease.remove(l.id());
        if (ofLease.isEmpty()) {
            byLease.remove(l.leaseId());
        }
        if (l.pattern().isLiteral()) {
            TreeSet<Long> same = byChannel.get(l.pattern().text());
            same.remove(l.id());
            if (same.isEmpty()) {
                byChannel.remove(l.pattern().text());
            }
        } else {
            wildcards.remove(l.id());
        }
        if (!l.group().isEmpty()) {
            long[] state = groups.get(l.group());
            if (--state[0] == 0) {
                groups.remove(l.group()); // a group that forms again starts its turns over
            }
        }
    }

    /** A lease's end takes its listeners with it. */
    @Override
    public void leaseEnded(ApplyContext context, long leaseId, List<String> released) {
        TreeSet<Long> ofLease = byLease.get(leaseId);
        if (ofLease != null) {
            for (long id : List.copyOf(ofLease)) {
                remove(listeners.get(id));
            }
        }
    }

    // ---- reads ---------------------------------------------------------------------------------

    /** Listener {@code id}, or null when it is not registered. */
    public ListenerView listener(long id) {
        Listener l = listeners.get(id);
        return l == null ? null : view(l);
    }

    /** Every listener, in id order, at most {@code limit}. */
    public List<ListenerView> listeners(int limit) {
        return listeners.values().stream().limit(limit).map(SignalTable::view).toList();
    }

    /** The listeners of lease {@code leaseId}, in id order. */
    public List<ListenerView> listenersOf(long leaseId) {
        TreeSet<Long> ofLease = byLease.get(leaseId);
        return ofLease == null ? List.of() : ofLease.stream().map(id -> view(listeners.get(id))).toList();
    }

    public int listenerCount() {
        return listeners.size();
    }

    /** How many groups have a member. */
    public int groupCount() {
        return groups.size();
    }

    private static ListenerView view(Listener l) {
        return new ListenerView(l.id(), l.leaseId(), l.pattern().text(), l.group());
    }

    // ---- snapshot section ------------------------------------------------------------------------

    /** Listeners by id (lease, pattern, group), then the groups' turns by name, then the recent publishes oldest first. */
    @Override
    public void writeSnapshot(DataOutputStream out) throws IOException {
        out.writeInt(listeners.size());
        for (Listener l : listeners.values()) {
            out.writeLong(l.id());
            out.writeLong(l.leaseId());
            Wire.writeString(out, l.pattern().text());
            Wire.writeString(out, l.group());
        }
        out.writeInt(groups.size());
        for (Map.Entry<String, long[]> g : groups.entrySet()) {
            Wire.writeString(out, g.getKey());
            out.writeLong(g.getValue()[1]);
        }
        out.writeInt(recentRequests.size());
        for (Map.Entry<Request, Integer> e : recentRequests.entries().entrySet()) {
            Wire.writeString(out, e.getKey().channel());
            out.writeLong(e.getKey().requestId());
            out.writeInt(e.getValue());
        }
    }

    /** Snapshots written before signals have no section for them, and nobody listens. */
    @Override
    public void readSnapshot(DataInputStream in, int formatVersion, Leases leases) throws IOException {
        if (formatVersion < 3) {
            return;
        }
        int count = Wire.count(in, "listener");
        for (int i = 0; i < count; i++) {
            SignalListen read = new SignalListen(in.readLong(), in.readLong(), Wire.readString(in, Limits.MAX_METADATA_BYTES),
                    Wire.readString(in, Limits.MAX_METADATA_BYTES), 0);
            String problem = checkListen(read);
            if (problem != null || leases.get(read.leaseId()) == null || listeners.containsKey(read.listenerId())) {
                throw new SnapshotFormatException("snapshot is corrupt: listener " + read.listenerId() + " of lease " + read.leaseId()
                        + (problem != null ? ": " + problem : " is unknown or repeated"));
            }
            add(new Listener(read.listenerId(), read.leaseId(), KeyPattern.parse("pattern", read.pattern()), read.group()));
        }
        int groupCount = Wire.count(in, "listener group");
        for (int i = 0; i < groupCount; i++) {
            String group = Wire.readString(in, Limits.MAX_METADATA_BYTES);
            long[] state = groups.get(group);
            if (state == null) {
                throw new SnapshotFormatException("snapshot is corrupt: listener group '" + group + "' has no member");
            }
            state[1] = in.readLong();
        }
        int requests = Wire.count(in, "publish request");
        for (int i = 0; i < requests; i++) {
            recentRequests.remember(new Request(Wire.readString(in, Limits.MAX_METADATA_BYTES), in.readLong()), in.readInt());
        }
    }
}
