package io.tenure.server.http;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Lock and semaphore names taken from raw paths: split first, then percent-decoded once. */
class HttpNamePathTest {
    @Test
    void aGetNamesEverythingAfterThePrefix() {
        assertThat(NamePath.LOCKS.nameOf("/v1/locks/jobs/nightly")).isEqualTo("jobs/nightly");
        assertThat(NamePath.LOCKS.nameOf("/v1/locks/jobs%2Fnightly")).isEqualTo("jobs/nightly");
        assertThat(NamePath.LOCKS.nameOf("/v1/locks/%C3%A9t%C3%A9")).isEqualTo("été");
        assertThat(NamePath.LOCKS.nameOf("/v1/locks/a+b%20c")).isEqualTo("a+b c");
    }

    @Test
    void aPostSplitsTheActionBeforeDecoding() {
        assertThat(NamePath.LOCKS.actionOf("/v1/locks/jobs/nightly/acquire")).isEqualTo(new NamePath.Target("jobs/nightly", "acquire"));
        assertThat(NamePath.LOCKS.actionOf("/v1/locks/x%2Facquire/release")).isEqualTo(new NamePath.Target("x/acquire", "release"));
        assertThat(NamePath.LOCKS.actionOf("/v1/locks/jobs%2Fnightly")).isNull();
        assertThat(NamePath.LOCKS.actionOf("/v1/locks/x")).isNull();
    }

    @Test
    void semaphoreNamesAreReadTheSameWayAndReportedAsTheSemaphoreField() {
        assertThat(NamePath.SEMAPHORES.nameOf("/v1/semaphores/pools%2Fgpu")).isEqualTo("pools/gpu");
        assertThat(NamePath.SEMAPHORES.actionOf("/v1/semaphores/pools/gpu/acquire")).isEqualTo(new NamePath.Target("pools/gpu", "acquire"));
        assertThat(NamePath.SEMAPHORES.nameOf("/v1/locks/x")).isEmpty();
        assertThatThrownBy(() -> NamePath.SEMAPHORES.decode("%C3")).isInstanceOf(Failure.class)
                .hasMessageContaining("semaphore name").satisfies(e -> assertThat(((Failure) e).field).isEqualTo("semaphore"));
        assertThatThrownBy(() -> NamePath.SEMAPHORES.check("")).isInstanceOf(Failure.class)
                .hasMessage("the semaphore name must not be empty");
    }

    @Test
    void decodesOnceOnly() {
        assertThat(NamePath.LOCKS.decode("50%2525")).isEqualTo("50%25");
    }

    @Test
    void refusesMalformedEscapesAndNonUtf8() {
        assertThatThrownBy(() -> NamePath.LOCKS.decode("a%zz")).isInstanceOf(Failure.class).hasMessageContaining("percent");
        assertThatThrownBy(() -> NamePath.LOCKS.decode("a%2")).isInstanceOf(Failure.class);
        assertThatThrownBy(() -> NamePath.LOCKS.decode("%C3")).isInstanceOf(Failure.class).hasMessageContaining("UTF-8");
    }
}
