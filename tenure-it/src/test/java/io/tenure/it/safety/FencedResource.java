package io.tenure.it.safety;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * The storage the locks protect, shared by every client process of a run: one register per key
 * behind a TCP line protocol on 127.0.0.1, in the harness JVM (never faulted itself). It accepts
 * a write only with a fencing token at least the highest it has accepted for that key (seed 000's
 * rule; {@link Fence#ABOVE} demands strictly greater), and logs every decision, accepted or
 * refused, to {@code resource.jsonl} as a {@link ResourceWrite}, in decision order.
 *
 * <pre>
 * READ key process token leaseId pauseMillis   →  VALUE value highest
 * WRITE key token value writer                  →  ACCEPT | REFUSE highest
 * </pre>
 *
 * A READ also tells the resource that {@code process} holds {@code key} with {@code token} and
 * will write after {@code pauseMillis}: an open <em>critical section</em>, which its WRITE closes.
 * The nemesis uses these to pause (F5) or cut off (F7) a client while it holds a lock.
 *
 * <p>The run's semaphores are resources too, fenced per grant by a {@link PermitFence} (its
 * Javadoc defines what holding means here), each decision logged to {@code permits.jsonl} as a
 * {@link PermitDecision}:
 *
 * <pre>
 * PWRITE key token permits writer               →  ACCEPT | REFUSE reason
 * PEND key token permits writer                 →  ENDED | NOTHELD reason
 * </pre>
 *
 * <p>The run's elections are resources too. A leader writes with its leadership's token and ends
 * its holding before it resigns; the resource fences each election as a semaphore of limit 1 (a
 * {@link PermitFence} of its own), so that by its view one leadership at a time holds, and logs
 * each decision to {@code leaders.jsonl}, as a {@link PermitDecision} of one permit:
 *
 * <pre>
 * LWRITE key token writer                       →  ACCEPT | REFUSE reason
 * LEND key token writer                         →  ENDED | NOTHELD reason
 * </pre>
 *
 * <p>The run's byte-range writers (issue 21) write ranges of one inode under grants of lock scopes,
 * fenced per byte by the SDK's {@link io.tenure.client.fence.InMemoryScopeFenceGuard} and per grant
 * by a {@link RangeHoldings} (its Javadoc defines holding there), each decision logged to
 * {@code ranges.jsonl} as a {@link RangeDecision}. {@code held} is the grant's ranges of the inode,
 * the scopes its token carries ({@code start-end[,start-end...]}); {@code mode} is {@code EXCLUSIVE}
 * or {@code SHARED}:
 *
 * <pre>
 * RWRITE inode start end mode token writer held →  ACCEPT | REFUSE reason
 * REND inode start end mode token writer held   →  ENDED | NOTHELD reason
 * </pre>
 */
public final class FencedResource implements AutoCloseable {
    /** Which tokens a write may carry. */
    public enum Fence {
        /** At least the highest accepted for the key (seed 000): a holder may write several times. */
        AT_LEAST,
        /** Strictly above the highest accepted for the key. */
        ABOVE
    }

    /** A client between its READ and its WRITE of {@code key}, holding the lock with {@code token}. */
    public record Section(String process, String key, long token, long leaseId, long readNanos, long writeDueNanos) {
    }

    private static final class Slot {
        long highest;
        long value;
    }

    private final Fence fence;
    private final ServerSocket listener;
    private final Writer log;
    private final Writer permitLog;
    private final PermitFence permitFence;
    private final Writer leaderLog;
    private final PermitFence leaderFence;
    /** The range writers' log ({@code ranges.jsonl}) and fence; null for a run without range writers. */
    private final Writer rangeLog;
    private final RangeHoldings rangeFence;
    private final Map<String, Slot> slots = new TreeMap<>();
    private final List<ResourceWrite> decisions = new ArrayList<>();
    private final Map<String, Section> sections = new HashMap<>();
    private final List<Socket> connections = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    /**
     * @param logFile       where the locks' decisions go ({@code resource.jsonl})
     * @param permitLogFile where the semaphores' decisions go ({@code permits.jsonl})
     * @param limits        the run's semaphores and their limits
     * @param leaderLogFile where the elections' decisions go ({@code leaders.jsonl})
     * @param elections     the run's elections
     */
    public FencedResource(Path logFile, Fence fence, Path permitLogFile, Map<String, Integer> limits, Path leaderLogFile,
                          List<String> elections) throws IOException {
        this(logFile, fence, permitLogFile, limits, leaderLogFile, elections, null, 0);
    }

    /**
     * @param rangeLogFile where the range writers' decisions go ({@code ranges.jsonl}); null when the run has none
     * @param rangeInode   the inode the range writers write
     */
    public FencedResource(Path logFile, Fence fence, Path permitLogFile, Map<String, Integer> limits, Path leaderLogFile,
                          List<String> elections, Path rangeLogFile, long rangeInode) throws IOException {
        this.fence = fence;
        this.rangeLog = rangeLogFile == null ? null : Files.newBufferedWriter(rangeLogFile, StandardCharsets.UTF_8);
        this.rangeFence = rangeLogFile == null ? null : new RangeHoldings(rangeInode);
        this.log = Files.newBufferedWriter(logFile, StandardCharsets.UTF_8);
        this.permitLog = Files.newBufferedWriter(permitLogFile, StandardCharsets.UTF_8);
        this.permitFence = new PermitFence(limits);
        this.leaderLog = Files.newBufferedWriter(leaderLogFile, StandardCharsets.UTF_8);
        this.leaderFence = new PermitFence(RunInfo.leaderLimits(elections));
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "fenced-resource-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public String endpoint() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    public Fence fence() {
        return fence;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket socket = listener.accept();
                connections.add(socket);
                Thread serve = new Thread(() -> serve(socket), "fenced-resource-" + socket.getPort());
                serve.setDaemon(true);
                serve.start();
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("fenced resource: " + e);
                }
            }
        }
    }

    private void serve(Socket socket) {
        try (socket;
             BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
             Writer out = new OutputStreamWriter(socket.getOutputStream(), StandardCharsets.UTF_8)) {
            String line;
            while ((line = in.readLine()) != null) {
                out.write(answer(line.trim().split(" ")));
                out.write('\n');
                out.flush();
            }
        } catch (IOException endOfConnection) {
            // The client went away (it ends, or was killed); its state here is unaffected.
        } finally {
            connections.remove(socket);
        }
    }

    private String answer(String[] words) {
        try {
            if (words[0].equals("READ") && words.length == 6) {
                return read(words[1], words[2], Long.parseLong(words[3]), Long.parseLong(words[4]), Long.parseLong(words[5]));
            }
            if (words[0].equals("WRITE") && words.length == 5) {
                return write(words[1], Long.parseLong(words[2]), Long.parseLong(words[3]), words[4]);
            }
            if (words[0].equals("PWRITE") && words.length == 5) {
                PermitDecision decision = permitWrite(words[1], Long.parseLong(words[2]), Integer.parseInt(words[3]), words[4]);
                return decision.accepted() ? "ACCEPT" : "REFUSE " + decision.reason();
            }
            if (words[0].equals("PEND") && words.length == 5) {
                PermitDecision decision = permitEnd(words[1], Long.parseLong(words[2]), Integer.parseInt(words[3]), words[4]);
                return decision.accepted() ? "ENDED" : "NOTHELD " + decision.reason();
            }
            if (words[0].equals("LWRITE") && words.length == 4) {
                PermitDecision decision = leaderWrite(words[1], Long.parseLong(words[2]), words[3]);
                return decision.accepted() ? "ACCEPT" : "REFUSE " + decision.reason();
            }
            if (words[0].equals("LEND") && words.length == 4) {
                PermitDecision decision = leaderEnd(words[1], Long.parseLong(words[2]), words[3]);
                return decision.accepted() ? "ENDED" : "NOTHELD " + decision.reason();
            }
            if (words[0].equals("RWRITE") && words.length == 8) {
                RangeDecision decision = rangeWrite(Long.parseLong(words[1]), Long.parseLong(words[2]), Long.parseLong(words[3]), words[4],
                        Long.parseLong(words[5]), words[6], words[7]);
                return decision.accepted() ? "ACCEPT" : "REFUSE " + decision.reason();
            }
            if (words[0].equals("REND") && words.length == 8) {
                RangeDecision decision = rangeEnd(Long.parseLong(words[1]), Long.parseLong(words[2]), Long.parseLong(words[3]), words[4],
                        Long.parseLong(words[5]), words[6], words[7]);
                return decision.accepted() ? "ENDED" : "NOTHELD " + decision.reason();
            }
        } catch (NumberFormatException e) {
            return "ERROR " + e.getMessage();
        }
        return "ERROR unknown request " + String.join(" ", words);
    }

    private synchronized String read(String key, String process, long token, long leaseId, long pauseMillis) {
        Slot slot = slots.computeIfAbsent(key, k -> new Slot());
        long now = System.nanoTime();
        sections.put(process, new Section(process, key, token, leaseId, now, now + pauseMillis * 1_000_000));
        notifyAll();
        return "VALUE " + slot.value + " " + slot.highest;
    }

    private synchronized String write(String key, long token, long value, String writer) {
        Slot slot = slots.computeIfAbsent(key, k -> new Slot());
        boolean accepted = fence == Fence.AT_LEAST ? token >= slot.highest : token > slot.highest;
        if (accepted) {
            slot.highest = token;
            slot.value = value;
        }
        ResourceWrite decision = new ResourceWrite(key, token, value, writer, System.nanoTime(), accepted);
        decisions.add(decision);
        try {
            JsonLines.append(log, decision);
            log.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        sections.remove(processOf(writer));
        notifyAll();
        return accepted ? "ACCEPT" : "REFUSE " + slot.highest;
    }

    private synchronized PermitDecision permitWrite(String key, long token, int permits, String writer) {
        return logDecisions(permitLog, permitFence.write(key, token, permits, writer, System.nanoTime()));
    }

    private synchronized PermitDecision permitEnd(String key, long token, int permits, String writer) {
        return logDecisions(permitLog, List.of(permitFence.end(key, token, permits, writer, System.nanoTime())));
    }

    private synchronized PermitDecision leaderWrite(String key, long token, String writer) {
        return logDecisions(leaderLog, leaderFence.write(key, token, 1, writer, System.nanoTime()));
    }

    private synchronized PermitDecision leaderEnd(String key, long token, String writer) {
        return logDecisions(leaderLog, List.of(leaderFence.end(key, token, 1, writer, System.nanoTime())));
    }

    private synchronized RangeDecision rangeWrite(long inode, long start, long end, String mode, long token, String writer, String held) {
        if (rangeFence == null) {
            return new RangeDecision(inode, start, end, held, mode, RangeDecision.Event.WRITE, token, writer, System.nanoTime(), false,
                    "this run has no range writers");
        }
        return logRanges(rangeFence.write(inode, start, end, held, mode, token, writer, System.nanoTime()));
    }

    private synchronized RangeDecision rangeEnd(long inode, long start, long end, String mode, long token, String writer, String held) {
        if (rangeFence == null) {
            return new RangeDecision(inode, start, end, held, mode, RangeDecision.Event.END, token, writer, System.nanoTime(), false,
                    "this run has no range writers");
        }
        return logRanges(List.of(rangeFence.end(inode, start, end, held, mode, token, writer, System.nanoTime())));
    }

    /** Logs the range writers' decisions in order (the caller holds the resource's lock); returns the last, the one to answer. */
    private RangeDecision logRanges(List<RangeDecision> decisions) {
        try {
            for (RangeDecision d : decisions) {
                JsonLines.append(rangeLog, d);
            }
            rangeLog.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        notifyAll();
        return decisions.get(decisions.size() - 1);
    }

    /** What {@code process} holds of the run's inode by the resource's view, or null: see {@link RangeHoldings#heldBy}. */
    public synchronized String rangesHeldBy(String process) {
        return rangeFence == null ? null : rangeFence.heldBy(process);
    }

    /** What {@code process} holds of the run's semaphores by the resource's view, or null: see {@link PermitFence#heldBy}. */
    public synchronized String permitsHeldBy(String process) {
        return permitFence.heldBy(process);
    }

    /** Logs a semaphore's or an election's decisions in order (the caller holds the resource's lock); returns the last, the one to answer. */
    private PermitDecision logDecisions(Writer to, List<PermitDecision> decisions) {
        try {
            for (PermitDecision d : decisions) {
                JsonLines.append(to, d);
            }
            to.flush();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        notifyAll(); // awaitSection may prefer a process holding permits
        return decisions.get(decisions.size() - 1);
    }

    /** The process part of a writer ({@code c3/12345} → {@code c3}). */
    public static String processOf(String writer) {
        int slash = writer.indexOf('/');
        return slash < 0 ? writer : writer.substring(0, slash);
    }

    /**
     * Waits until some client that {@code eligible} accepts is in a critical section whose write
     * is still at least {@code minAhead} away; empty if none within {@code limit}.
     */
    public synchronized Optional<Section> awaitSection(Predicate<Section> eligible, Duration minAhead, Duration limit)
            throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (true) {
            long now = System.nanoTime();
            for (Section s : sections.values()) {
                if (eligible.test(s) && s.writeDueNanos() - now >= minAhead.toNanos()) {
                    return Optional.of(s);
                }
            }
            long left = deadline - now;
            if (left <= 0) {
                return Optional.empty();
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }

    /** Waits until a token above {@code token} was accepted for {@code key}; the first such write, or empty at the deadline. */
    public synchronized Optional<ResourceWrite> awaitAcceptedAbove(String key, long token, long deadlineNanos)
            throws InterruptedException {
        while (true) {
            for (ResourceWrite w : decisions) {
                if (w.accepted() && w.key().equals(key) && w.token() > token) {
                    return Optional.of(w);
                }
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return Optional.empty();
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }

    /** Waits for the decision on {@code process}'s write of {@code key} with {@code token}; empty at the deadline. */
    public synchronized Optional<ResourceWrite> awaitWrite(String process, String key, long token, long deadlineNanos)
            throws InterruptedException {
        while (true) {
            for (ResourceWrite w : decisions) {
                if (w.key().equals(key) && w.token() == token && processOf(w.writer()).equals(process)) {
                    return Optional.of(w);
                }
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return Optional.empty();
            }
            wait(Math.max(1, left / 1_000_000));
        }
    }

    /** Every decision so far, in order. */
    public synchronized List<ResourceWrite> decisions() {
        return List.copyOf(decisions);
    }

    @Override
    public void close() {
        closed = true;
        try {
            listener.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        for (Socket s : connections) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }
        synchronized (this) {
            try {
                log.close();
                permitLog.close();
                leaderLog.close();
                if (rangeLog != null) {
                    rangeLog.close();
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
