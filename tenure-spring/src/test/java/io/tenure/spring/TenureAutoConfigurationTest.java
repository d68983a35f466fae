package io.tenure.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.TenureClient;
import io.tenure.testing.TenureExtension;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.integration.support.locks.DefaultLockRegistry;
import org.springframework.integration.support.locks.LockRegistry;

/** The auto-configuration in a plain application context (no web server), against one real member. */
class TenureAutoConfigurationTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(TenureAutoConfiguration.class));

    private static String endpoints() {
        return String.join(",", tenure.endpoints());
    }

    @Test
    void withEndpointsThereIsAClientAndARegistryThatLocks() {
        AtomicReference<TenureClient> made = new AtomicReference<>();
        runner.withPropertyValues("tenure.endpoints=" + endpoints(), "tenure.client-id=billing-app", "tenure.session-ttl=45s",
                        "tenure.lock-registry.prefix=billing/")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(TenureClient.class).hasSingleBean(TenureLockRegistry.class);
                    TenureLockRegistry registry = context.getBean(TenureLockRegistry.class);
                    assertThat(context.getBean(LockRegistry.class)).isSameAs(registry);
                    made.set(context.getBean(TenureClient.class));
                    RegistryLock lock = registry.obtain("close-month");
                    assertThat(lock.tryLock()).isTrue();
                    try {
                        assertThat(tenure.client().describe("billing/close-month").holder()).isEqualTo("billing-app");
                        assertThat(lock.handle().lease().ttl()).isEqualTo(java.time.Duration.ofSeconds(45));
                    } finally {
                        lock.unlock();
                    }
                });
        assertThatThrownBy(() -> made.get().lock("after")).as("closed with the context")
                .isInstanceOf(IllegalStateException.class).hasMessage("the Tenure client is closed");
    }

    @Test
    void endpointsAsAYamlListCountToo() {
        runner.withPropertyValues("tenure.endpoints[0]=" + tenure.endpoints().get(0))
                .run(context -> assertThat(context).hasSingleBean(TenureClient.class).hasSingleBean(TenureLockRegistry.class));
    }

    @Test
    void withoutEndpointsNothingIsMade() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(TenureClient.class)
                .doesNotHaveBean(TenureLockRegistry.class).doesNotHaveBean(TenureProperties.class));
    }

    @Test
    void theApplicationsOwnBeansWin() {
        TenureClient own = tenure.cluster().newClient();
        runner.withPropertyValues("tenure.endpoints=" + endpoints())
                .withBean(TenureClient.class, () -> own)
                .run(context -> {
                    assertThat(context).hasSingleBean(TenureClient.class);
                    assertThat(context.getBean(TenureClient.class)).isSameAs(own);
                    assertThat(context).hasSingleBean(TenureLockRegistry.class);
                });
        runner.withPropertyValues("tenure.endpoints=" + endpoints())
                .withBean(LockRegistry.class, DefaultLockRegistry::new)
                .run(context -> assertThat(context).hasSingleBean(LockRegistry.class).doesNotHaveBean(TenureLockRegistry.class)
                        .hasSingleBean(TenureClient.class));
    }

    @Test
    void withoutSpringIntegrationThereIsOnlyTheClient() {
        runner.withPropertyValues("tenure.endpoints=" + endpoints())
                .withClassLoader(new FilteredClassLoader("org.springframework.integration"))
                .run(context -> assertThat(context).hasSingleBean(TenureClient.class).doesNotHaveBean(TenureLockRegistry.class));
    }

    @Test
    void aBadPropertyFailsTheContextNamingIt() {
        runner.withPropertyValues("tenure.endpoints=" + endpoints(), "tenure.session-ttl=10ms")
                .run(context -> assertThat(context).hasFailed().getFailure()
                        .hasStackTraceContaining("tenure.session-ttl: lease TTL must be at least"));
        runner.withPropertyValues("tenure.endpoints=localhost")
                .run(context -> assertThat(context).getFailure()
                        .hasStackTraceContaining("tenure.endpoints: endpoint 'localhost' must be host:port"));
        runner.withPropertyValues("tenure.endpoints=" + endpoints(), "tenure.tls.cert-file=/nowhere/client.pem")
                .run(context -> assertThat(context).getFailure()
                        .hasStackTraceContaining("tenure.tls: a client certificate needs its key"));
        runner.withPropertyValues("tenure.endpoints=" + endpoints(), "tenure.token=not a token")
                .run(context -> assertThat(context).getFailure().hasStackTraceContaining("tenure.token: a token is printable ASCII"));
    }
}
