package io.tenure.core;

import io.tenure.core.kernel.Applied;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.LeaseGrant;
import io.tenure.core.kernel.LeaseRevoke;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.kernel.Result.Code;
import io.tenure.core.lock.LockResult.Granted;
import io.tenure.core.kernel.LeaseResult.LeaseGranted;
import io.tenure.core.kernel.Result.Rejected;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.stream.Stream;

import static io.tenure.core.Replica.expect;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Every refused command is a {@link Rejected} result with the right code and a message naming
 * the problem, and it changes nothing (I3): the state after it is byte for byte the state of a
 * twin replica that applied a no-op at the same position instead.
 */
class BadInputTest {
    /** Lease 1 ("client-1") holds "k" with {@link #HELD_TOKEN}, lease 2 exists, lease 3 waits for "k". */
    private static void established(Replica r) {
        r.grantLease(1);
        r.grantLease(2);
        r.grantLease(3);
        r.acquire("k", 1);
        r.enqueue("k", 3);
        r.grantLease(4);
        long gone = r.acquire("released", 4).fencingToken();
        r.release("released", 4, gone);
    }

    /** The token of lease 1's hold on "k": the fourth command of {@link #established}. */
    private static final long HELD_TOKEN = Replica.position(4, 0);

    static Stream<Arguments> refusals() {
        String longAscii = "x".repeat(Limits.MAX_KEY_BYTES + 1);
        // 342 three-byte characters: under the limit in chars, over it in UTF-8 bytes.
        String longInBytes = "\u20ac".repeat(342);
        byte[] bigMetadata = new byte[Limits.MAX_METADATA_BYTES + 1];
        String longClient = "c".repeat(Limits.MAX_CLIENT_ID_BYTES + 1);
        return Stream.of(
                refusal("empty name", new LockAcquire("", 2, null, true), Code.INVALID_ARGUMENT, "name must not be empty"),
                refusal("null name", new LockAcquire(null, 2, null, true), Code.INVALID_ARGUMENT, "name must not be empty"),
                refusal("name over the byte limit", new LockAcquire(longAscii, 2, null, true), Code.INVALID_ARGUMENT, "1025 bytes"),
                refusal("name over the limit in UTF-8 bytes only", new LockAcquire(longInBytes, 2, null, true), Code.INVALID_ARGUMENT, "1026 bytes"),
                refusal("metadata over the limit", new LockAcquire("k2", 2, bigMetadata, true), Code.INVALID_ARGUMENT, "metadata"),
                refusal("metadata over the limit on a held lock", new LockAcquire("k", 1, bigMetadata, true), Code.INVALID_ARGUMENT, "metadata"),
                refusal("acquire by an unknown lease", new LockAcquire("k2", 42, null, true), Code.NOT_FOUND, "lease 42"),
                refusal("acquire by lease id 0", new LockAcquire("k2", 0, null, true), Code.NOT_FOUND, "lease 0"),
                refusal("TTL 0", new LeaseGrant(9, 0, "c"), Code.INVALID_ARGUMENT, "ttl"),
                refusal("negative TTL", new LeaseGrant(9, -5_000, "c"), Code.INVALID_ARGUMENT, "ttl"),
                refusal("TTL under the minimum", new LeaseGrant(9, Limits.MIN_TTL_MILLIS - 1, "c"), Code.INVALID_ARGUMENT, "ttl"),
                refusal("TTL over the maximum", new LeaseGrant(9, Limits.MAX_TTL_MILLIS + 1, "c"), Code.INVALID_ARGUMENT, "ttl"),
                refusal("lease id 0", new LeaseGrant(0, 5_000, "c"), Code.INVALID_ARGUMENT, "lease id must not be 0"),
                refusal("client id over the limit", new LeaseGrant(9, 5_000, longClient), Code.INVALID_ARGUMENT, "client_id"),
                refusal("a taken lease id with another TTL", new LeaseGrant(1, Replica.TTL_MILLIS + 1, Replica.clientOf(1)), Code.ALREADY_EXISTS, "lease 1"),
                refusal("revoke of an unknown lease", new LeaseRevoke(42), Code.NOT_FOUND, "lease 42"),
                refusal("release with a wrong token", new LockRelease("k", 1, HELD_TOKEN + 1), Code.FAILED_PRECONDITION, "stale"),
                refusal("release with an older token", new LockRelease("k", 1, HELD_TOKEN - 1), Code.FAILED_PRECONDITION, "token " + (HELD_TOKEN - 1)),
                refusal("release by a lease that does not hold it", new LockRelease("k", 2, HELD_TOKEN), Code.FAILED_PRECONDITION, "not held by lease 2"),
                refusal("release by the lease waiting for it", new LockRelease("k", 3, HELD_TOKEN), Code.FAILED_PRECONDITION, "not held by lease 3"),
                refusal("release of a free lock", new LockRelease("free", 2, HELD_TOKEN), Code.FAILED_PRECONDITION, "not held"),
                refusal("release of a lock released by someone else", new LockRelease("released", 2, Replica.position(7, 0)), Code.FAILED_PRECONDITION, "not held"),
                refusal("release by an unknown lease", new LockRelease("k", 42, HELD_TOKEN), Code.NOT_FOUND, "lease 42"));
    }

    private static Arguments refusal(String name, Command command, Code code, String messagePart) {
        return arguments(Named.of(name, command), code, messagePart);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("refusals")
    void refusedCommandIsRejectedWithAClearMessageAndChangesNothing(Command command, Code code, String messagePart) {
        Replica refused = Replica.with(BadInputTest::established);
        Replica untouched = Replica.with(BadInputTest::established);
        assertThat(refused.lock("k").fencingToken()).as("the setup is what the cases assume").isEqualTo(HELD_TOKEN);

        Applied applied = refused.apply(command);
        untouched.apply(Replica.HARMLESS);

        Rejected rejected = expect(applied.result(), Rejected.class);
        assertThat(rejected.code()).isEqualTo(code);
        assertThat(rejected.message()).contains(messagePart);
        assertThat(applied.effects()).isEmpty();
        assertThat(refused.snapshot()).isEqualTo(untouched.snapshot());
        assertThat(refused.view()).isEqualTo(untouched.view());
        assertThat(refused.state.events().size()).isEqualTo(untouched.state.events().size());
    }

    @Test
    void theHarmlessTwinCommandReallyIsHarmless() {
        Replica a = Replica.with(BadInputTest::established);
        Replica b = Replica.with(BadInputTest::established);
        a.apply(Replica.HARMLESS);
        b.apply(new LockAcquire("fresh", 2, null, false));

        assertThat(a.snapshot()).as("the comparison above detects a change").isNotEqualTo(b.snapshot());
        assertThat(a.view()).isNotEqualTo(b.view());
    }

    @Test
    void valuesAtTheLimitsAreAccepted() {
        Replica replica = new Replica();
        assertThat(replica.run(new LeaseGrant(1, Limits.MIN_TTL_MILLIS, "c".repeat(Limits.MAX_CLIENT_ID_BYTES))))
                .isEqualTo(new LeaseGranted(1, Limits.MIN_TTL_MILLIS));
        assertThat(replica.run(new LeaseGrant(2, Limits.MAX_TTL_MILLIS, "c"))).isEqualTo(new LeaseGranted(2, Limits.MAX_TTL_MILLIS));
        assertThat(replica.run(new LeaseGrant(-3, 5_000, "negative ids are ids"))).isEqualTo(new LeaseGranted(-3, 5_000));

        String longest = "\u20ac".repeat(341) + "x"; // 1024 bytes
        assertThat(longest.getBytes(StandardCharsets.UTF_8)).hasSize(Limits.MAX_KEY_BYTES);
        byte[] largest = new byte[Limits.MAX_METADATA_BYTES];
        assertThat(replica.run(new LockAcquire(longest, 1, largest, false))).isInstanceOf(Granted.class);
        assertThat(replica.lock(longest).metadata()).hasSize(Limits.MAX_METADATA_BYTES);
    }
}
