package io.tenure.spring;

import io.tenure.client.TenureClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code tenure.*} properties of {@link TenureAutoConfiguration}: where the members are and
 * how to reach them. Nothing is configured unless {@code tenure.endpoints} is set.
 *
 * <pre>
 * tenure.endpoints=10.0.0.1:7070,10.0.0.2:7070,10.0.0.3:7070
 * tenure.session-ttl=30s
 * tenure.tls.ca-file=/etc/tenure/ca.pem
 * tenure.token=${TENURE_TOKEN}
 * tenure.lock-registry.prefix=billing/
 * </pre>
 *
 * @param endpoints      {@code host:port} of one or more members, tried in this order
 * @param clientId       the holder name others see for this application's leases (default: host name and process id)
 * @param sessionTtl     the TTL of the client's session lease, which holds the registry's locks (default 30 s)
 * @param requestTimeout how long a call that does not wait on purpose may take, retries included (default 10 s)
 * @param token          shown as {@code authorization: Bearer <token>} to members with authentication on; use it with TLS
 * @param tls            TLS to the members
 * @param lockRegistry   the {@link TenureLockRegistry}
 */
@ConfigurationProperties("tenure")
public record TenureProperties(List<String> endpoints, String clientId, Duration sessionTtl, Duration requestTimeout,
                               String token, Tls tls, LockRegistry lockRegistry) {

    /**
     * TLS to the members, on when {@code enabled} or when a file is given.
     *
     * @param enabled  TLS with the JVM's default trust store when no {@code caFile} is given
     * @param caFile   the CA (PEM) whose certificates the members present
     * @param certFile this client's certificate (PEM), for members started with {@code --client-cert-auth}; needs {@code keyFile}
     * @param keyFile  its private key (PEM, PKCS#8, not encrypted)
     */
    public record Tls(boolean enabled, Path caFile, Path certFile, Path keyFile) {
        boolean on() {
            return enabled || caFile != null || certFile != null || keyFile != null;
        }
    }

    /**
     * The lock registry's settings.
     *
     * @param prefix put before every key to make the Tenure lock's name (default {@value TenureLockRegistry#DEFAULT_PREFIX})
     */
    public record LockRegistry(String prefix) {
    }

    /** The registry's prefix: {@code tenure.lock-registry.prefix}, or {@value TenureLockRegistry#DEFAULT_PREFIX}. */
    public String lockRegistryPrefix() {
        return lockRegistry == null || lockRegistry.prefix() == null ? TenureLockRegistry.DEFAULT_PREFIX : lockRegistry.prefix();
    }

    /**
     * A client builder set from these properties.
     *
     * @throws IllegalArgumentException naming the property whose value the client refuses
     */
    public TenureClient.Builder clientBuilder() {
        TenureClient.Builder builder = TenureClient.builder();
        if (endpoints == null || endpoints.isEmpty()) {
            throw new IllegalArgumentException("tenure.endpoints: at least one endpoint (host:port) is required");
        }
        set("tenure.endpoints", builder::endpoints, endpoints);
        if (clientId != null) {
            set("tenure.client-id", builder::clientId, clientId);
        }
        if (sessionTtl != null) {
            set("tenure.session-ttl", builder::sessionTtl, sessionTtl);
        }
        if (requestTimeout != null) {
            set("tenure.request-timeout", builder::requestTimeout, requestTimeout);
        }
        if (token != null) {
            set("tenure.token", builder::token, token);
        }
        if (tls != null && tls.on()) {
            set("tenure.tls", t -> builder.tls(t.caFile(), t.certFile(), t.keyFile()), tls);
        }
        return builder;
    }

    /**
     * The client these properties describe.
     *
     * @throws IllegalArgumentException naming the property whose value the client refuses
     */
    public TenureClient buildClient() {
        TenureClient.Builder builder = clientBuilder();
        try {
            return builder.build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("tenure.endpoints: " + e.getMessage(), e);
        }
    }

    private static <T> void set(String property, Consumer<T> setter, T value) {
        try {
            setter.accept(value);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalArgumentException(property + ": " + e.getMessage(), e);
        }
    }
}
