package io.tenure.server.raft;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.core.kernel.ReadBarrier;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** A read waits until this member has applied its index: by an entry of Tenure's, an entry of the Raft library's own, or a snapshot. */
class AppliedWaitTest {
    private final TenureStateMachine stateMachine = new TenureStateMachine(() -> 0L, 1_000);

    private void applyBarrierAt(long index) {
        stateMachine.apply(1, index, EntryCodec.encode(new Entry(1, index, 1, List.of(ReadBarrier.INSTANCE))));
    }

    @Test
    void aWaitEndsWhenItsIndexIsAppliedAndNotBefore() {
        applyBarrierAt(1);
        assertThat(stateMachine.whenApplied(1)).as("already applied").isCompleted();

        CompletableFuture<Void> at3 = stateMachine.whenApplied(3);
        CompletableFuture<Void> at4 = stateMachine.whenApplied(4);
        applyBarrierAt(2);
        assertThat(at3).isNotDone();
        stateMachine.indexApplied(1, 3); // an entry of the Raft library's own
        assertThat(at3).isCompleted();
        assertThat(at4).isNotDone();
        applyBarrierAt(4);
        assertThat(at4).isCompleted();
    }

    @Test
    void aSnapshotCoveringTheIndexEndsTheWait() throws IOException {
        TenureStateMachine leader = new TenureStateMachine(() -> 0L, 1_000);
        leader.apply(1, 9, EntryCodec.encode(new Entry(1, 9, 1, List.of(ReadBarrier.INSTANCE))));
        ByteArrayOutputStream snapshot = new ByteArrayOutputStream();
        leader.writeSnapshot(snapshot);

        CompletableFuture<Void> at7 = stateMachine.whenApplied(7);
        CompletableFuture<Void> at12 = stateMachine.whenApplied(12);
        stateMachine.loadSnapshot(new ByteArrayInputStream(snapshot.toByteArray()), 1, 9, "installed from the leader");

        assertThat(at7).isCompleted();
        assertThat(at12).isNotDone();
    }
}
