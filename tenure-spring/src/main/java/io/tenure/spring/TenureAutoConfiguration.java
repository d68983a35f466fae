package io.tenure.spring;

import io.tenure.client.TenureClient;
import java.util.List;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Spring Boot auto-configuration: when {@code tenure.endpoints} is set (see
 * {@link TenureProperties}), a {@link TenureClient} (closed with the context) and, with Spring
 * Integration on the class path, a {@link TenureLockRegistry} over it. An application's own
 * {@code TenureClient} bean is used instead of a new one, and its own
 * {@link org.springframework.integration.support.locks.LockRegistry} (of any kind) means no
 * Tenure registry is made. Without {@code tenure.endpoints}, nothing is.
 */
@AutoConfiguration
@Conditional(TenureAutoConfiguration.OnEndpoints.class)
@EnableConfigurationProperties(TenureProperties.class)
public class TenureAutoConfiguration {

    /** The client of {@code tenure.*}; its session lease holds the registry's locks. */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public TenureClient tenureClient(TenureProperties properties) {
        return properties.buildClient();
    }

    /** The registry, when Spring Integration is there to use it. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.integration.support.locks.ExpirableLockRegistry")
    static class LockRegistryConfiguration {
        /** Locks named {@code tenure.lock-registry.prefix} (default {@code spring/}) and the key. */
        @Bean
        @ConditionalOnMissingBean(org.springframework.integration.support.locks.LockRegistry.class)
        TenureLockRegistry tenureLockRegistry(TenureClient tenureClient, TenureProperties properties) {
            return new TenureLockRegistry(tenureClient, properties.lockRegistryPrefix());
        }
    }

    /** Matches when {@code tenure.endpoints} is set, as a comma-separated value or as a list. */
    static final class OnEndpoints extends SpringBootCondition {
        @Override
        public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
            List<String> endpoints = Binder.get(context.getEnvironment())
                    .bind("tenure.endpoints", Bindable.listOf(String.class)).orElse(List.of());
            return endpoints.isEmpty()
                    ? ConditionOutcome.noMatch("tenure.endpoints is not set")
                    : ConditionOutcome.match("tenure.endpoints is " + endpoints);
        }
    }
}
