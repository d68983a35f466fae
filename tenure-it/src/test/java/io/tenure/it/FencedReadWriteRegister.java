package io.tenure.it;

import io.tenure.client.LockMode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.BooleanSupplier;

/**
 * The storage a read/write lock protects, in the test: one value, read under read grants and
 * written under write grants, each with its grant's fencing token, fenced the way a real store
 * behind a read/write lock would be.
 *
 * <p>Every grant has its own token, and a writer's token is above every token granted before it,
 * so the fence is two numbers: the highest token the register has seen (from any read or write)
 * and the token of the last accepted write.
 * <ul>
 *   <li>A write is accepted only with a token above every other grant's token seen (at least the
 *       highest seen, which may be its own read's): a lower one was granted before a grant that
 *       already used the register, so its holding had ended.</li>
 *   <li>A read is accepted only with a token at least the last accepted write's: a reader granted
 *       before that writer had let go (or lost its lease) before the writer was granted. A
 *       downgraded writer reads with its own token, which is that write's.</li>
 * </ul>
 * A refusal is a violation when the refused holder's grant is still valid afterwards (its client
 * still trusts its lease, and a client gives up a lease before the server can expire it); with a
 * lost lease it is the fence doing its job, and only counted.
 *
 * <p>It also counts who is inside the critical section, as each holder declares it: a holder
 * enters after its grant arrived and leaves before it releases, and a writer turns into a reader
 * here before it asks the server to downgrade. A writer beside any other holder, or a reader
 * beside a writer, is an overlap; it is a violation when both still trust their grants at that
 * moment. When one of them had lost its lease by then, the server may legitimately have given
 * the lock away, and the overlap is counted as excused.
 *
 * <p>An election's leaders use it too, each as a writer with its leadership's token
 * ({@code ElectionFailoverTest}): one leader inside at a time, and a deposed leader's write refused.
 */
final class FencedReadWriteRegister {
    /** An accepted write, in acceptance order. */
    record Write(long token, long value, String writer) {
    }

    /** A holder inside the critical section: the mode it holds in here, its token, and whether its grant is still valid. */
    private record Holder(String who, LockMode mode, long token, BooleanSupplier valid) {
        @Override
        public String toString() {
            return who + " (" + mode + ", token " + token + ", " + (valid.getAsBoolean() ? "valid" : "lease lost") + ")";
        }
    }

    // Everything below is guarded by this.
    private final Map<String, Holder> inside = new LinkedHashMap<>();
    private long highestSeen = Long.MIN_VALUE;
    private long lastWrite = Long.MIN_VALUE;
    private long value;
    private final List<Write> accepted = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private final List<String> excused = new ArrayList<>();
    private int maxReadersInside;
    private long readerEntries;
    private long reads;

    /** {@code who} enters with its grant (mode, token); {@code valid} tells later whether the grant is still trusted. */
    synchronized void enter(String who, LockMode mode, long token, BooleanSupplier valid) {
        if (inside.containsKey(who)) {
            violations.add(who + " entered twice (token " + token + ", inside " + inside.get(who) + ")");
        }
        Holder me = new Holder(who, mode, token, valid);
        for (Holder other : inside.values()) {
            if (mode == LockMode.READ && other.mode() == LockMode.READ) {
                continue;
            }
            String overlap = me + " entered beside " + other;
            if (valid.getAsBoolean() && other.valid().getAsBoolean()) {
                violations.add("overlap: " + overlap + ", both grants valid");
            } else {
                excused.add("overlap: " + overlap);
            }
        }
        inside.put(who, me);
        if (mode == LockMode.READ) {
            readerEntries++;
        }
        maxReadersInside = Math.max(maxReadersInside, (int) inside.values().stream().filter(h -> h.mode() == LockMode.READ).count());
    }

    /** {@code who}, a writer inside, holds in read mode from now on (before it asks the server). */
    synchronized void downgrade(String who) {
        Holder holder = holder(who, "downgrade");
        if (holder != null) {
            inside.put(who, new Holder(who, LockMode.READ, holder.token(), holder.valid()));
        }
    }

    /** {@code who} leaves the critical section (before it releases on the server). */
    synchronized void exit(String who) {
        if (inside.remove(who) == null) {
            violations.add(who + " left without having entered");
        }
    }

    /** A fenced read with the holder's token: the value, or empty when refused. */
    synchronized OptionalLong read(String who) {
        Holder holder = holder(who, "read");
        if (holder == null) {
            return OptionalLong.empty();
        }
        if (holder.token() < lastWrite) {
            refused(holder, "read", "a write of token " + lastWrite + " was accepted");
            return OptionalLong.empty();
        }
        highestSeen = Math.max(highestSeen, holder.token());
        reads++;
        return OptionalLong.of(value);
    }

    /** A fenced write of {@code newValue} with the holder's token, which must hold in write mode here; whether it was accepted. */
    synchronized boolean write(String who, long newValue) {
        Holder holder = holder(who, "write");
        if (holder == null) {
            return false;
        }
        if (holder.mode() != LockMode.WRITE) {
            violations.add(holder + " wrote while holding in read mode");
            return false;
        }
        if (holder.token() < highestSeen) {
            refused(holder, "write", "token " + highestSeen + " was seen");
            return false;
        }
        if (newValue != value + 1) {
            violations.add("lost update: " + holder + " wrote " + newValue + " over " + value);
        }
        highestSeen = holder.token();
        lastWrite = holder.token();
        value = newValue;
        accepted.add(new Write(holder.token(), newValue, who));
        return true;
    }

    private Holder holder(String who, String what) {
        Holder holder = inside.get(who);
        if (holder == null) {
            violations.add(who + " tried to " + what + " without being inside");
        }
        return holder;
    }

    private void refused(Holder holder, String what, String why) {
        if (holder.valid().getAsBoolean()) {
            violations.add("stale " + what + " refused while its grant was valid: " + holder + ": " + why);
        } else {
            excused.add("stale " + what + " refused: " + holder + ": " + why);
        }
    }

    /** Broken promises: overlaps of valid grants, refusals of valid grants, lost updates, misuse. */
    synchronized List<String> violations() {
        return List.copyOf(violations);
    }

    /** Overlaps and refusals explained by a lost lease. */
    synchronized List<String> excused() {
        return List.copyOf(excused);
    }

    synchronized List<Write> accepted() {
        return List.copyOf(accepted);
    }

    synchronized long value() {
        return value;
    }

    synchronized long reads() {
        return reads;
    }

    /** The highest token any accepted read or write carried. */
    synchronized long highestSeen() {
        return highestSeen;
    }

    /** How many times a reader entered. */
    synchronized long readerEntries() {
        return readerEntries;
    }

    /** The most readers inside at once. */
    synchronized int maxReadersInside() {
        return maxReadersInside;
    }

    /** Who is inside now, for the report of a moment (a kill). */
    synchronized List<String> insideNow() {
        return inside.values().stream().map(Holder::toString).toList();
    }
}
