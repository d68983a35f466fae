package io.tenure.it.safety;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A safety run's {@code run.json}: the settings the checker's bounds come from, and what ran.
 *
 * @param ttlMillis             the lease TTL the clients asked for
 * @param electionTimeoutMillis the members' election timeout
 * @param expiryPeriodMillis    how often the leader looks for expired leases
 * @param members               the members' names (each has {@code members/<name>/audit.jsonl})
 * @param keys                  the hot lock keys
 * @param startNanos            the run's start, on the shared monotonic clock
 * @param endNanos              the run's end
 * @param seed                  the nemesis's seed
 * @param faults                the fault kinds scheduled
 */
public record RunInfo(long ttlMillis, long electionTimeoutMillis, long expiryPeriodMillis, List<String> members,
                      List<String> keys, long startNanos, long endNanos, long seed, List<String> faults) {

    public RunInfo {
        members = List.copyOf(members);
        keys = List.copyOf(keys);
        faults = List.copyOf(faults);
    }

    static RunInfo read(Path file) {
        JsonNode n;
        try {
            n = new ObjectMapper().readTree(Files.readString(file));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
        return new RunInfo(n.path("ttlMillis").asLong(0), n.path("electionTimeoutMillis").asLong(1000),
                n.path("expiryPeriodMillis").asLong(50), strings(n.path("members")), strings(n.path("keys")),
                n.path("startNanos").asLong(0), n.path("endNanos").asLong(0), n.path("seed").asLong(0),
                strings(n.path("faults")));
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(e -> out.add(e.isTextual() ? e.asText() : e.toString()));
        return out;
    }
}
