package io.tenure.it.safety;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;

/**
 * {@code run.json}: what a safety run was. Written when the workload starts (with
 * {@code endNanos} 0; the client processes read the TTL and the keys from it) and again, complete,
 * when the run ends.
 *
 * @param ttlMillis             the TTL of every lease the clients grant
 * @param electionTimeoutMillis the members' {@code --election-timeout}
 * @param expiryPeriodMillis    how often a leader looks for expired leases
 * @param members               every member that took part, in order of creation (with F9, more than the cluster size)
 * @param keys                  the hot lock keys (each is also a register of the fenced resource)
 * @param startNanos            when the workload started, on the shared monotonic clock
 * @param endNanos              when the last client process had ended
 * @param seed                  the seed of the nemesis's schedule and the clients' choices
 * @param faults                the fault kinds asked for
 * @param clients               each client process and its role
 * @param fence                 the resource's rule: {@code AT_LEAST} (token ≥ highest accepted) or {@code ABOVE} (>)
 * @param snapshotEvery         the members' {@code --snapshot-every}
 * @param faultsSkipped         fault kinds asked for but not run, and why
 * @param semaphores            the semaphores the lock workers also use (each is also a resource), with their limits; empty
 *                              for a run made before semaphores
 * @param elections             the elections the lock workers also campaign in (each is also a resource, fenced as a
 *                              semaphore of limit 1); empty for a run made before elections
 * @param rangeInode            the inode the lock workers' range writers write ({@link RangeWorker}, issue 21), a
 *                              resource fenced per byte range; 0 when the run has no range writers (a run made before
 *                              them, or with {@code ranges} false)
 */
public record RunInfo(long ttlMillis, long electionTimeoutMillis, long expiryPeriodMillis, List<String> members,
                      List<String> keys, long startNanos, long endNanos, long seed, List<String> faults,
                      List<Client> clients, String fence, long snapshotEvery, Map<String, String> faultsSkipped,
                      Map<String, Integer> semaphores, List<String> elections, long rangeInode) {
    /** The server's lease-expiry scan period. */
    public static final long EXPIRY_PERIOD_MILLIS = 50;
    public static final String FILE = "run.json";

    private static final ObjectMapper JSON = new ObjectMapper()
            .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false)
            .enable(SerializationFeature.INDENT_OUTPUT);

    /** A client process: its name ({@code c3}, also its history file's name) and role ({@code lock}, {@code keeper}, {@code watcher}). */
    public record Client(String name, String role) {
    }

    public RunInfo {
        semaphores = semaphores == null ? Map.of() : Map.copyOf(semaphores);
        elections = elections == null ? List.of() : List.copyOf(elections);
    }

    /** Each election with a limit of 1, as the {@link PermitFence} that fences elections takes them. */
    static Map<String, Integer> leaderLimits(List<String> elections) {
        Map<String, Integer> limits = new java.util.TreeMap<>();
        elections.forEach(name -> limits.put(name, 1));
        return limits;
    }

    /** Whether the run had byte-range writers. */
    public boolean hasRanges() {
        return rangeInode > 0;
    }

    public static RunInfo read(Path runDir) throws IOException {
        return JSON.readValue(runDir.resolve(FILE).toFile(), RunInfo.class);
    }

    /** Writes {@code run.json} atomically (a reader never sees half of it). */
    public void write(Path runDir) throws IOException {
        Path temporary = runDir.resolve(FILE + ".tmp");
        JSON.writeValue(temporary.toFile(), this);
        Files.move(temporary, runDir.resolve(FILE), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    public RunInfo ended(long endNanos, List<String> members, Map<String, String> faultsSkipped) {
        return new RunInfo(ttlMillis, electionTimeoutMillis, expiryPeriodMillis, members, keys, startNanos, endNanos, seed,
                faults, clients, fence, snapshotEvery, faultsSkipped, semaphores, elections, rangeInode);
    }
}
