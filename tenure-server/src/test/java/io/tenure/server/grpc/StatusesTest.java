package io.tenure.server.grpc;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tenure.server.LimitExceeded;
import io.tenure.server.Overloaded;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

/** A shed request and a limit both answer RESOURCE_EXHAUSTED; only the shed one carries a retry hint. */
class StatusesTest {
    @Test
    void aShedRequestCarriesItsRetryHintInATrailer() {
        StatusRuntimeException status = Statuses.of(new CompletionException(new Overloaded("grant", 250, "this member is behind")));

        assertThat(status.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(status.getStatus().getDescription()).isEqualTo("this member is behind");
        assertThat(status.getTrailers().get(Statuses.RETRY_AFTER_MS)).isEqualTo("250");
    }

    @Test
    void aLimitHasNoRetryHint() {
        StatusRuntimeException status = Statuses.of(new LimitExceeded("max-leases-per-client", "too many leases"));

        assertThat(status.getStatus().getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
        assertThat(status.getTrailers() == null || status.getTrailers().get(Statuses.RETRY_AFTER_MS) == null).isTrue();
    }
}
