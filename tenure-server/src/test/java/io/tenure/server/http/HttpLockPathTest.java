package io.tenure.server.http;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Lock names taken from raw paths: split first, then percent-decoded once. */
class HttpLockPathTest {
    @Test
    void aGetNamesEverythingAfterThePrefix() {
        assertThat(LockPath.lockOf("/v1/locks/jobs/nightly")).isEqualTo("jobs/nightly");
        assertThat(LockPath.lockOf("/v1/locks/jobs%2Fnightly")).isEqualTo("jobs/nightly");
        assertThat(LockPath.lockOf("/v1/locks/%C3%A9t%C3%A9")).isEqualTo("été");
        assertThat(LockPath.lockOf("/v1/locks/a+b%20c")).isEqualTo("a+b c");
    }

    @Test
    void aPostSplitsTheActionBeforeDecoding() {
        assertThat(LockPath.actionOf("/v1/locks/jobs/nightly/acquire")).isEqualTo(new LockPath.Target("jobs/nightly", "acquire"));
        assertThat(LockPath.actionOf("/v1/locks/x%2Facquire/release")).isEqualTo(new LockPath.Target("x/acquire", "release"));
        assertThat(LockPath.actionOf("/v1/locks/jobs%2Fnightly")).isNull();
        assertThat(LockPath.actionOf("/v1/locks/x")).isNull();
    }

    @Test
    void decodesOnceOnly() {
        assertThat(LockPath.decode("50%2525")).isEqualTo("50%25");
    }

    @Test
    void refusesMalformedEscapesAndNonUtf8() {
        assertThatThrownBy(() -> LockPath.decode("a%zz")).isInstanceOf(Failure.class).hasMessageContaining("percent");
        assertThatThrownBy(() -> LockPath.decode("a%2")).isInstanceOf(Failure.class);
        assertThatThrownBy(() -> LockPath.decode("%C3")).isInstanceOf(Failure.class).hasMessageContaining("UTF-8");
    }
}
