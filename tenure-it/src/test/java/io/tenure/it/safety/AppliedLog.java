package io.tenure.it.safety;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The members' audit logs ({@code members/<name>/audit.jsonl}, written by
 * {@code io.tenure.server.raft.AuditLog}) merged into one applied log: per Raft index, the
 * commands, results and effects, as the first member that logged them wrote them, and when any
 * member first applied it. Where two members (or two lives of one member) logged different things
 * at one index, that is a {@link Divergence}. Each member's coverage is kept, for the checks that
 * ask what the survivors applied.
 *
 * <p>Tolerates what a killed member leaves: a torn last line of a life, a lost tail, a life that
 * starts again from a snapshot.
 */
final class AppliedLog {
    static final ObjectMapper JSON = new ObjectMapper();

    /** One applied command. {@code loggedBy} names the member and life that logged it first ({@code n2#3}). */
    record Command(long index, int slot, long position, long term, boolean skippedByTerm, JsonNode command,
                   JsonNode result, JsonNode effects, String loggedBy) {
        String type() {
            return command.path("type").asText();
        }

        String resultType() {
            return result.path("type").asText();
        }
    }

    /** One Raft index: its term, its commands (none for a configuration or metadata entry), when first applied. */
    static final class Index {
        final long index;
        final long term;
        final Command[] commands;
        long firstAt = Long.MAX_VALUE;
        final String loggedBy;

        Index(long index, long term, int slots, String loggedBy) {
            this.index = index;
            this.term = term;
            this.commands = new Command[slots];
            this.loggedBy = loggedBy;
        }

        boolean complete() {
            for (Command c : commands) {
                if (c == null) {
                    return false;
                }
            }
            return true;
        }
    }

    /** What one member logged, over all its lives. */
    static final class Member {
        final String name;
        boolean present;
        final BitSet logged = new BitSet();
        long snapshotUpTo = -1;
        long lastIndex = -1;
        int lives;
        /** Whether some life began from the empty state (no snapshot before its first index). */
        boolean beganEmpty;
        int tornLines;
        int malformedLines;

        Member(String name) {
            this.name = name;
        }

        /** Whether this member applied {@code index}: logged it, or loaded a snapshot at or past it. */
        boolean covers(long index) {
            return index <= snapshotUpTo || (index <= Integer.MAX_VALUE && logged.get((int) index));
        }
    }

    /** Two logs disagree at one index. */
    record Divergence(long index, String first, String second, String what, long atNanos) {}

    /** A digest line: the state's CRC32C after applying {@code index}, as {@code loggedBy} computed it. */
    record Digest(long index, String loggedBy, long digest, long atNanos) {}

    final TreeMap<Long, Index> indexes = new TreeMap<>();
    final Map<String, Member> members = new LinkedHashMap<>();
    final TreeMap<Long, List<Digest>> digests = new TreeMap<>();
    final List<Divergence> divergences = new ArrayList<>();
    /** The largest index such that every index from the first logged one up to it is complete; -1 when none. */
    long completeUpTo = -1;
    /** How many commands were logged more than once (by several members, or lives) and found equal or not. */
    int crossChecked;

    static AppliedLog read(Path runDir, List<String> memberNames) {
        AppliedLog log = new AppliedLog();
        List<String> names = new ArrayList<>(memberNames);
        Path dir = runDir.resolve("members");
        if (Files.isDirectory(dir)) {
            try (var listing = Files.list(dir)) {
                listing.filter(Files::isDirectory).map(p -> p.getFileName().toString()).sorted()
                        .filter(n -> !names.contains(n)).forEach(names::add);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        for (String name : names) {
            Member member = new Member(name);
            log.members.put(name, member);
            Path file = dir.resolve(name).resolve("audit.jsonl");
            if (Files.isRegularFile(file)) {
                member.present = true;
                log.readMember(member, file);
            }
        }
        log.completeUpTo = log.computeCompleteUpTo();
        return log;
    }

    long firstIndex() {
        return indexes.isEmpty() ? -1 : indexes.firstKey();
    }

    boolean anyBeganEmpty() {
        return members.values().stream().anyMatch(m -> m.beganEmpty);
    }

    /** When {@code index} was first applied by any member, or -1 when nobody logged it. */
    long firstAt(long index) {
        Index ix = indexes.get(index);
        return ix == null ? -1 : ix.firstAt;
    }

    private long computeCompleteUpTo() {
        long expected = firstIndex();
        long last = -1;
        for (Index ix : indexes.values()) {
            if (ix.index != expected || !ix.complete()) {
                break;
            }
            last = ix.index;
            expected++;
        }
        return last;
    }

    private void readMember(Member member, Path file) {
        List<String> lines = new ArrayList<>();
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                lines.add(line);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        boolean lifeHasIndex = false;
        boolean lifeFromSnapshot = false;
        for (int i = 0; i < lines.size(); i++) {
            String text = lines.get(i);
            if (text.isBlank()) {
                continue;
            }
            JsonNode n;
            try {
                n = JSON.readTree(text);
            } catch (IOException torn) {
                n = null;
            }
            if (n == null || !n.isObject()) {
                // A killed member's last line; the next life starts with an "open" line.
                boolean last = i == lines.size() - 1 || lines.get(i + 1).contains("\"line\":\"open\"");
                if (last) {
                    member.tornLines++;
                } else {
                    member.malformedLines++;
                }
                continue;
            }
            String kind = n.path("line").asText();
            String by = member.name + "#" + Math.max(1, member.lives);
            long at = n.path("at").asLong();
            switch (kind) {
                case "open" -> {
                    member.lives++;
                    lifeHasIndex = false;
                    lifeFromSnapshot = false;
                }
                case "snapshot" -> {
                    member.snapshotUpTo = Math.max(member.snapshotUpTo, n.path("index").asLong());
                    if (!lifeHasIndex) {
                        lifeFromSnapshot = true;
                    }
                }
                case "digest" -> digests.computeIfAbsent(n.path("index").asLong(), k -> new ArrayList<>())
                        .add(new Digest(n.path("index").asLong(), by, n.path("digest").asLong(), at));
                case "index", "apply" -> {
                    if (!lifeHasIndex) {
                        lifeHasIndex = true;
                        member.beganEmpty |= !lifeFromSnapshot;
                    }
                    long index = n.path("index").asLong();
                    member.lastIndex = Math.max(member.lastIndex, index);
                    if (index <= Integer.MAX_VALUE) {
                        member.logged.set((int) index);
                    }
                    merge(n, kind.equals("apply"), by, at);
                }
                default -> member.malformedLines++;
            }
        }
    }

    private void merge(JsonNode n, boolean apply, String by, long at) {
        long index = n.path("index").asLong();
        long term = n.path("term").asLong();
        int slots = apply ? n.path("slots").asInt() : 0;
        Index ix = indexes.get(index);
        if (ix == null) {
            ix = new Index(index, term, slots, by);
            indexes.put(index, ix);
        } else if (ix.term != term || ix.commands.length != slots) {
            divergences.add(new Divergence(index, ix.loggedBy, by, "term " + ix.term + " with " + ix.commands.length
                    + " command(s) against term " + term + " with " + slots, at));
            return;
        }
        ix.firstAt = Math.min(ix.firstAt, at);
        if (!apply) {
            return;
        }
        int slot = n.path("slot").asInt();
        Command c = new Command(index, slot, n.path("position").asLong(), term, n.path("skippedByTerm").asBoolean(false),
                n.path("command"), n.path("result"), n.path("effects"), by);
        Command before = ix.commands[slot];
        if (before == null) {
            ix.commands[slot] = c;
            return;
        }
        crossChecked++;
        if (before.skippedByTerm() != c.skippedByTerm() || !before.command().equals(c.command())
                || !before.result().equals(c.result()) || !before.effects().equals(c.effects())) {
            divergences.add(new Divergence(index, before.loggedBy(), by, "slot " + slot + ": " + before.command() + " -> "
                    + before.result() + " " + before.effects() + " against " + c.command() + " -> " + c.result() + " "
                    + c.effects(), at));
        }
    }

    /**
     * The grant a wake-up effect hands a waiter ({@code {"type":"Granted","key","leaseId","fencingToken","again"}}),
     * or the leadership it hands a candidate ({@code {"type":"Elected",...}}, the same fields), or
     * null for any other effect.
     */
    static JsonNode handOff(JsonNode effect) {
        String result = effect.path("result").path("type").asText();
        return effect.path("type").asText().equals("Wake") && (result.equals("Granted") || result.equals("Elected"))
                ? effect.path("result") : null;
    }

    /** Every logged command in log order. */
    Iterable<Command> commands() {
        List<Command> all = new ArrayList<>();
        for (Index ix : indexes.values()) {
            for (Command c : ix.commands) {
                if (c != null) {
                    all.add(c);
                }
            }
        }
        return all;
    }
}
