package io.tenure.it.safety;

import io.tenure.client.TenureClient;
import io.tenure.client.UnauthenticatedException;
import io.tenure.proto.v1.PermissionLevel;
import io.tenure.server.PeerTls;
import io.tenure.testing.TestCertificates;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;

/**
 * A safety run with security on ({@code --secured true}): a CA of the run's own
 * ({@code runDir/tls}), each member's certificate (CN the member, SANs 127.0.0.1 and its own
 * address) on its client, HTTP and text ports ({@code --cert-file}) and on its peer port
 * ({@code --peer-cert-file}, mutual TLS between members); once the members serve, a user
 * {@code root} and a user {@code worker} whose role {@value #ROLE} may write (and so read)
 * every kind and name, and authentication switched on. The harness's own calls (status,
 * membership changes, the F10 filler, the minority probes, the counter read at the end) show
 * root's token; every client process shows the worker's, so the workload's every request is
 * checked as an ordinary user's.
 */
final class SecuredRun {
    static final String ROLE = "safety-worker";
    private static final Duration TOKEN_TTL = Duration.ofDays(1);

    private final Path dir;
    private final TestCertificates ca;
    private volatile String rootToken;
    private volatile String workerToken;

    private SecuredRun(Path dir) {
        this.dir = dir;
        this.ca = new TestCertificates(dir, "safety");
    }

    /** A CA of the run's own, its files under {@code runDir/tls}. */
    static SecuredRun create(Path runDir) {
        return new SecuredRun(runDir.resolve("tls"));
    }

    Path caFile() {
        return ca.caFile();
    }

    /** The arguments that turn TLS on for member {@code name} reached at {@code host}: client ports and peer port, one certificate. */
    List<String> memberArgs(String name, String host) {
        PeerTls files = ca.member(name, TOKEN_TTL, List.of("127.0.0.1", host));
        return List.of("--cert-file", files.certFile().toString(), "--key-file", files.keyFile().toString(),
                "--peer-cert-file", files.certFile().toString(), "--peer-key-file", files.keyFile().toString(),
                "--peer-trusted-ca-file", files.trustedCaFile().toString());
    }

    /** Root's token once {@link #switchOn} made it; null before. */
    String rootToken() {
        return rootToken;
    }

    /** The file holding the worker's token, for the client processes (a token is not put on a command line). */
    Path workerTokenFile() {
        return dir.resolve("worker.token");
    }

    String workerToken() {
        return workerToken;
    }

    /**
     * Makes the users and the role through the members' API (over TLS, before authentication is
     * on), switches authentication on, and takes a token for each user.
     */
    void switchOn(List<String> endpoints) throws IOException {
        String rootPassword = "root-" + UUID.randomUUID();
        String workerPassword = "worker-" + UUID.randomUUID();
        try (TenureClient setup = TenureClient.builder().endpoints(endpoints).tls(caFile()).build()) {
            setup.auth().addUser("root", rootPassword);
            setup.auth().grantRole("root", "root");
            setup.auth().addRole(ROLE);
            setup.auth().grantPermission(ROLE, "*", "", PermissionLevel.WRITE);
            setup.auth().addUser("worker", workerPassword);
            setup.auth().grantRole("worker", ROLE);
            setup.auth().enable();
            rootToken = setup.auth().authenticate("root", rootPassword, TOKEN_TTL);
            workerToken = setup.auth().authenticate("worker", workerPassword, TOKEN_TTL);
        }
        Files.writeString(workerTokenFile(), workerToken + "\n");
        // The harness checks itself: each member, once it applied the switch, refuses a call without a token.
        for (String endpoint : endpoints) {
            Waits.until(endpoint + " refuses a call without a token", Duration.ofSeconds(30), () -> {
                try (TenureClient anonymous = TenureClient.builder().endpoints(List.of(endpoint)).tls(caFile()).build()) {
                    anonymous.grantLease(Duration.ofMinutes(1)).close();
                    return false;
                } catch (UnauthenticatedException refused) {
                    return true;
                } catch (RuntimeException notYet) {
                    return false;
                }
            });
        }
    }

    /** A client builder for a client process: TLS to the run's CA, the worker's token from {@code tokenFile}. */
    static TenureClient.Builder worker(TenureClient.Builder builder, Path caFile, Path tokenFile) throws IOException {
        return builder.tls(caFile).token(Files.readString(tokenFile).trim());
    }
}
