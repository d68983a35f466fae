package io.tenure.it.safety;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.it.safety.Op.Kind;
import io.tenure.it.safety.Op.Outcome;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The harness's own checks flag what they promise to, on hand-made records. */
class HarnessChecksTest {
    @Test
    void aMinorityMemberThatShedsWithARetryHintRefusedButALimitWithoutOneServed() {
        io.grpc.Metadata hint = new io.grpc.Metadata();
        hint.put(io.grpc.Metadata.Key.of("tenure-retry-after-ms", io.grpc.Metadata.ASCII_STRING_MARSHALLER), "1050");
        assertThat(MinorityProbe.cutOff(io.grpc.Status.RESOURCE_EXHAUSTED.asRuntimeException(hint))).isTrue();
        assertThat(MinorityProbe.cutOff(io.grpc.Status.UNAVAILABLE.asRuntimeException())).isTrue();
        assertThat(MinorityProbe.cutOff(io.grpc.Status.DEADLINE_EXCEEDED.asRuntimeException())).isTrue();
        assertThat(MinorityProbe.cutOff(io.grpc.Status.RESOURCE_EXHAUSTED.asRuntimeException())).as("a limit, not a shed").isFalse();
        assertThat(MinorityProbe.cutOff(io.grpc.Status.NOT_FOUND.asRuntimeException())).isFalse();
    }

    @Test
    void aLowerTokenAcceptedAfterAHigherOneIsAViolationUnderEitherFence() {
        List<ResourceWrite> writes = List.of(accepted("k", 10, 1, "c1/1"), accepted("k", 7, 2, "c2/1"));
        assertThat(resourceViolations(writes, FencedResource.Fence.AT_LEAST)).singleElement().asString().contains("stale token");
        assertThat(resourceViolations(writes, FencedResource.Fence.ABOVE)).singleElement().asString().contains("stale token");
    }

    @Test
    void anEqualTokenIsAcceptedOnlyByTheAtLeastFence() {
        List<ResourceWrite> writes = List.of(accepted("k", 10, 1, "c1/1"), accepted("k", 10, 2, "c1/2"));
        assertThat(resourceViolations(writes, FencedResource.Fence.AT_LEAST)).isEmpty();
        assertThat(resourceViolations(writes, FencedResource.Fence.ABOVE)).singleElement().asString().contains("stale token");
    }

    @Test
    void twoAcceptedWritesOfOneValueAreALostUpdate() {
        List<ResourceWrite> writes = List.of(accepted("k", 10, 5, "c1/1"), accepted("k", 11, 5, "c2/1"),
                accepted("other", 3, 5, "c3/1"));
        assertThat(resourceViolations(writes, FencedResource.Fence.AT_LEAST)).singleElement().asString()
                .contains("lost update on k");
    }

    @Test
    void refusedWritesChangeNothing() {
        List<ResourceWrite> writes = List.of(accepted("k", 10, 1, "c1/1"), new ResourceWrite("k", 4, 1, "c2/1", 2, false),
                accepted("k", 12, 2, "c3/1"));
        assertThat(resourceViolations(writes, FencedResource.Fence.AT_LEAST)).isEmpty();
    }

    @Test
    void aWriteRecordedOkThatTheResourceRefusedOrNeverSawIsAViolation() {
        List<ResourceWrite> writes = List.of(new ResourceWrite("k", 4, 1, "c2/7", 2, false));
        List<Op> ops = List.of(write("c2", 7, "k", 4, 1, Outcome.OK), write("c3", 9, "k", 5, 1, Outcome.OK),
                write("c4", 3, "k", 6, 2, Outcome.INFO));
        List<String> violations = new ArrayList<>();
        HarnessChecks.checkWritesRecorded(ops, writes, violations);
        assertThat(violations).hasSize(2);
        assertThat(violations.get(0)).contains("c2 recorded WRITE 7 OK").contains("refused");
        assertThat(violations.get(1)).contains("c3 recorded WRITE 9 OK").contains("no such write");
    }

    @Test
    void aWriteAcceptedAfterAnotherProcessWasGrantedALargerTokenIsWarned() {
        List<Op> ops = List.of(new Op(1, "c2", Kind.ACQUIRE, "k", 5, 20, 0, 0, 100, 200, Outcome.OK, 20, null, null, null));
        List<ResourceWrite> writes = List.of(new ResourceWrite("k", 10, 1, "c1/4", 150, true),
                new ResourceWrite("k", 10, 2, "c1/5", 300, true));
        List<String> warnings = new ArrayList<>();
        HarnessChecks.checkStaleAccepts(ops, writes, warnings);
        assertThat(warnings).singleElement().asString().contains("c1/5").contains("c2 was granted it with token 20");
    }

    private static List<String> resourceViolations(List<ResourceWrite> writes, FencedResource.Fence fence) {
        List<String> violations = new ArrayList<>();
        HarnessChecks.checkResource(writes, fence, violations);
        return violations;
    }

    private static ResourceWrite accepted(String key, long token, long value, String writer) {
        return new ResourceWrite(key, token, value, writer, token, true);
    }

    @Test
    void countedIncrementsAreCheckedExactlyOnceAgainstTheValueReadAfterTheRun() throws Exception {
        List<Op> ops = List.of(incr("c1", 1, 1, Outcome.OK), incr("c2", 2, 2, Outcome.OK), incr("c1", 3, 0, Outcome.INFO),
                incr("c2", 4, 0, Outcome.FAIL), incr("c3", 5, 4, Outcome.OK));
        // Three acknowledged, one unknown: 3 or 4 after the run; answered 1, 2 and 4 (the unknown one took 3).
        assertThat(counterViolations(ops, "{\"n\": 4}")).isEmpty();
        assertThat(counterViolations(ops, "{\"n\": 3}")).singleElement().asString().contains("answered 4, above the 3");
        assertThat(counterViolations(ops, "{\"n\": 2}")).anySatisfy(v -> assertThat(v).contains("2 after the run, but 3 increments"));
        assertThat(counterViolations(ops, "{\"n\": 5}")).singleElement().asString().contains("expected 3 to 4");
        List<Op> twice = List.of(incr("c1", 1, 1, Outcome.OK), incr("c2", 2, 1, Outcome.OK));
        assertThat(counterViolations(twice, "{\"n\": 2}")).singleElement().asString().contains("value 1 answered to two increments");
        assertThat(counterViolations(ops, "{\"error\": \"UNAVAILABLE\"}")).singleElement().asString().contains("did not answer");
        assertThat(counterViolations(ops, "{}")).singleElement().asString().contains("not read after the run");
    }

    private static List<String> counterViolations(List<Op> ops, String finals) throws Exception {
        List<String> violations = new ArrayList<>();
        HarnessChecks.checkCounters(ops, new com.fasterxml.jackson.databind.ObjectMapper().readTree(finals), violations);
        return violations;
    }

    private static Op incr(String process, long id, long value, Outcome outcome) {
        return new Op(id, process, Kind.INCR, "n", 0, 0, value, 0, 1, 2, outcome, 0, null, null, null);
    }

    private static Op write(String process, long id, String key, long token, long value, Outcome outcome) {
        return new Op(id, process, Kind.WRITE, key, 1, token, value, 0, 1, 2, outcome, 0, null, null, null);
    }

    private static Op kvRead(long id, long invoke, long complete, long value, long revision) {
        return new Op(id, "c" + id, Kind.KV_READ, "k", 0, revision, value, 0, invoke, complete, Outcome.OK, 0, null, null, null);
    }

    private static Op kvCas(long id, long invoke, long complete, long from, long value, Outcome outcome, long revision) {
        return new Op(id, "c" + id, Kind.KV_CAS, "k", 0, from, value, 0, invoke, complete, outcome, revision, null, null, null);
    }

    private static List<String> kvViolations(Op... ops) {
        List<String> violations = new ArrayList<>();
        HarnessChecks.checkKv(List.of(ops), violations);
        return violations;
    }

    @Test
    void aLinearizableKvHistoryPasses() {
        assertThat(kvViolations(
                kvCas(1, 0, 10, 0, 101, Outcome.OK, 0),           // created the key
                kvRead(2, 11, 20, 101, 5),                          // at revision 5
                kvCas(3, 21, 30, 5, 102, Outcome.OK, 9),
                kvCas(4, 22, 31, 5, 103, Outcome.FAIL, 9),         // lost the race, saw 9
                kvCas(5, 32, 40, 9, 104, Outcome.INFO, 0),         // unknown: it did swap
                kvCas(6, 41, 50, 12, 105, Outcome.OK, 15),         // compared 104's revision, which a read shows
                kvRead(7, 35, 45, 104, 12),
                kvRead(8, 51, 60, 105, 15))).isEmpty();
    }

    @Test
    void theKvCheckCatchesALostUpdateAStaleReadAValueFromNowhereAndABrokenChain() {
        assertThat(kvViolations(kvCas(1, 0, 10, 5, 101, Outcome.OK, 7), kvCas(2, 0, 10, 5, 102, Outcome.OK, 8)))
                .anySatisfy(v -> assertThat(v).contains("lost update"));
        assertThat(kvViolations(kvCas(1, 0, 10, 5, 101, Outcome.OK, 7), kvRead(2, 11, 20, 100, 5), kvCas(3, 0, 1, 0, 100, Outcome.OK, 5)))
                .anySatisfy(v -> assertThat(v).contains("saw revision 5, older than revision 7"));
        assertThat(kvViolations(kvRead(1, 0, 10, 999, 5))).anySatisfy(v -> assertThat(v).contains("which no write wrote"));
        assertThat(kvViolations(kvRead(1, 0, 10, 101, 5), kvCas(2, 20, 30, 3, 101, Outcome.OK, 5)))
                .anySatisfy(v -> assertThat(v).contains("only after the read completed"));
        assertThat(kvViolations(kvCas(1, 0, 10, 3, 101, Outcome.OK, 5), kvCas(2, 20, 30, 4, 102, Outcome.OK, 9)))
                .anySatisfy(v -> assertThat(v).contains("no write of unknown outcome compared that"));
        assertThat(kvViolations(kvCas(1, 0, 10, 3, 101, Outcome.OK, 5), kvRead(2, 11, 20, 101, 6)))
                .anySatisfy(v -> assertThat(v).contains("but it was written at revision 5"));
    }
}
