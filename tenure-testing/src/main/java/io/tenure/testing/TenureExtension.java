package io.tenure.testing;

import io.tenure.client.TenureClient;
import java.time.Duration;
import java.util.Objects;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * A JUnit 5 extension that runs a real {@link TenureCluster} for a test class or for each test.
 *
 * <pre>{@code
 * class InvoiceJobTest {
 *     @RegisterExtension
 *     static final TenureExtension tenure = TenureExtension.members(1);   // one cluster for the class
 *
 *     @Test
 *     void onlyOneWorkerRuns(TenureClient client) {                      // or tenure.client()
 *         ...
 *     }
 * }
 * }</pre>
 *
 * <p>{@code TenureExtension.members(3).secured()} runs them as production does: TLS on every port
 * and authentication on; {@link #client()} and injected clients connect over TLS as the user
 * {@code root}, and a test adds its own users and roles through {@code client.auth()}, then
 * connects as them with {@code cluster().newClientWithToken(token)}.
 *
 * <p>Registered on a {@code static} field, the members start before the first test and stop after
 * the last; on an instance field, each test gets fresh members. Test methods and constructors may
 * declare {@link TenureCluster} and {@link TenureClient} parameters.
 */
public final class TenureExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
        AfterEachCallback, ParameterResolver {
    private final TenureCluster.Builder builder;
    private TenureCluster cluster;
    private TenureClient client;
    private boolean perClass;

    private TenureExtension(TenureCluster.Builder builder) {
        this.builder = builder;
    }

    /** Members with the defaults of {@link TenureCluster.Builder}. */
    public static TenureExtension members(int members) {
        return new TenureExtension(TenureCluster.builder().members(members));
    }

    /** Members as {@code builder} describes them. */
    public static TenureExtension of(TenureCluster.Builder builder) {
        return new TenureExtension(Objects.requireNonNull(builder, "builder"));
    }

    /** Sets the election timeout of a cluster of several members (see {@link TenureCluster.Builder#electionTimeout}). */
    public TenureExtension electionTimeout(Duration electionTimeout) {
        builder.electionTimeout(electionTimeout);
        return this;
    }

    /** TLS on every port and authentication on, as {@link TenureCluster.Builder#secured()} describes. */
    public TenureExtension secured() {
        builder.secured();
        return this;
    }

    /** The running members. */
    public TenureCluster cluster() {
        if (cluster == null) {
            throw new IllegalStateException("the Tenure members are not running: use the extension from a test");
        }
        return cluster;
    }

    /** A client for every member, made on first use and closed with the members. */
    public synchronized TenureClient client() {
        if (client == null) {
            client = cluster().newClient();
        }
        return client;
    }

    /** The members' client endpoints. */
    public java.util.List<String> endpoints() {
        return cluster().endpoints();
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        perClass = true;
        start();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        if (!perClass) {
            start();
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (!perClass) {
            stop();
        }
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        return type == TenureCluster.class || type == TenureClient.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        Class<?> type = parameter.getParameter().getType();
        if (cluster == null) {
            throw new ParameterResolutionException("the Tenure members are not running yet (a constructor parameter of "
                    + "a class whose extension is an instance field?)");
        }
        return type == TenureCluster.class ? cluster() : client();
    }

    private synchronized void start() {
        cluster = builder.start();
    }

    private synchronized void stop() {
        TenureCluster running = cluster;
        cluster = null;
        client = null;
        if (running != null) {
            running.close();
        }
    }
}
