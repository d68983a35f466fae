package io.tenure.server.security;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The audit trail's file: one JSON object per line, a new file at the size limit, the oldest beyond the count deleted. */
class AuditTrailTest {
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void everyRecordIsOneJsonLineWithWhoWhatAndTheOutcome() throws IOException {
        Path file = dir.resolve("audit.jsonl");
        AuditTrail trail = AuditTrail.open(new AuditTrail.Settings(file, 1 << 20, 3), "n1");
        trail.record(new Principal("alice", "token", "10.0.0.5:51234"), "acquire", "lock", "jobs/nightly", 42, 65536, "granted", "");
        trail.record(Principal.NOBODY.from("10.0.0.6:4000"), "authenticate", "", "", 0, 0, "unauthenticated", "no credential (http)");
        trail.close();

        List<JsonNode> lines = lines(file);
        assertThat(lines).hasSize(2);
        JsonNode grant = lines.get(0);
        assertThat(grant.get("member").asText()).isEqualTo("n1");
        assertThat(grant.get("user").asText()).isEqualTo("alice");
        assertThat(grant.get("credential").asText()).isEqualTo("token");
        assertThat(grant.get("remote").asText()).isEqualTo("10.0.0.5:51234");
        assertThat(grant.get("action").asText()).isEqualTo("acquire");
        assertThat(grant.get("kind").asText()).isEqualTo("lock");
        assertThat(grant.get("resource").asText()).isEqualTo("jobs/nightly");
        assertThat(grant.get("lease").asLong()).isEqualTo(42);
        assertThat(grant.get("token").asLong()).isEqualTo(65536);
        assertThat(grant.get("outcome").asText()).isEqualTo("granted");
        assertThat(grant.get("time").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
        assertThat(lines.get(1).has("kind")).as("no empty fields").isFalse();
        assertThat(lines.get(1).get("message").asText()).isEqualTo("no credential (http)");
    }

    @Test
    void aFullFileMovesAsideAndOnlyTheNewestOnesAreKept() throws IOException {
        Path file = dir.resolve("audit.jsonl");
        AuditTrail trail = AuditTrail.open(new AuditTrail.Settings(file, 4096, 2), "n1");
        for (int i = 0; i < 500; i++) {
            trail.record(new Principal("worker", "token", "127.0.0.1:1"), "release", "lock", "jobs/" + i, i + 1, i + 1, "released", "");
        }
        trail.close();

        assertThat(Files.exists(AuditTrail.older(file, 1))).isTrue();
        assertThat(Files.exists(AuditTrail.older(file, 2))).isTrue();
        assertThat(Files.exists(AuditTrail.older(file, 3))).as("beyond --audit-files").isFalse();
        for (Path kept : List.of(file, AuditTrail.older(file, 1), AuditTrail.older(file, 2))) {
            assertThat(Files.size(kept)).as(kept.toString()).isLessThanOrEqualTo(4096);
        }
        // The newest record is in the current file; the kept files follow one another without a gap.
        List<JsonNode> current = lines(file);
        assertThat(current.get(current.size() - 1).get("resource").asText()).isEqualTo("jobs/499");
        List<JsonNode> all = new ArrayList<>(lines(AuditTrail.older(file, 2)));
        all.addAll(lines(AuditTrail.older(file, 1)));
        all.addAll(current);
        for (int i = 1; i < all.size(); i++) {
            assertThat(all.get(i).get("lease").asLong()).isEqualTo(all.get(i - 1).get("lease").asLong() + 1);
        }
        assertThat(trail.dropped()).isZero();
    }

    @Test
    void offRecordsNothingAndBadSettingsNameTheirFlag() {
        assertThat(AuditTrail.open(AuditTrail.Settings.OFF, "n1").enabled()).isFalse();
        assertThat(new AuditTrail.Settings(dir.resolve("a"), 100, 5).problem()).contains("--audit-max-size");
        assertThat(new AuditTrail.Settings(dir.resolve("a"), 1 << 20, 0).problem()).contains("--audit-files");
        assertThatThrownBy(() -> AuditTrail.open(new AuditTrail.Settings(dir, 1 << 20, 5), "n1"))
                .isInstanceOf(UncheckedIOException.class).hasMessageContaining("--audit-file");
    }

    private static List<JsonNode> lines(Path file) throws IOException {
        List<JsonNode> parsed = new ArrayList<>();
        for (String line : Files.readAllLines(file)) {
            parsed.add(JSON.readTree(line));
        }
        return parsed;
    }
}
