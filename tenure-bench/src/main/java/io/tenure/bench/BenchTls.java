package io.tenure.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The certificates of a run on TLS ({@code tenure bench --tls}): a CA, a member certificate
 * naming 127.0.0.1, and a client certificate, each an EC P-256 key, made with {@code openssl}
 * in the run's directory, as an operator would make them (README, "Security").
 *
 * @param ca         the CA certificate, trusted by both sides
 * @param memberCert the members' certificate (all members share it: they all listen on 127.0.0.1)
 * @param memberKey  its key
 * @param clientCert the clients' certificate
 * @param clientKey  its key
 */
record BenchTls(Path ca, Path memberCert, Path memberKey, Path clientCert, Path clientKey) {

    /** Makes the files in {@code dir}; fails naming openssl when it is missing or refuses. */
    static BenchTls make(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Path caKey = dir.resolve("ca.key");
        Path ca = dir.resolve("ca.pem");
        openssl(dir, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2",
                "-subj", "/CN=tenure-bench-ca", "-keyout", caKey.toString(), "-out", ca.toString());
        Path ext = Files.writeString(dir.resolve("member.ext"), "subjectAltName=IP:127.0.0.1\n", StandardCharsets.US_ASCII);
        BenchTls tls = new BenchTls(ca, dir.resolve("member.pem"), dir.resolve("member.key"), dir.resolve("client.pem"),
                dir.resolve("client.key"));
        sign(dir, "member", tls.memberKey, tls.memberCert, ca, caKey, ext);
        sign(dir, "bench-client", tls.clientKey, tls.clientCert, ca, caKey, null);
        return tls;
    }

    /** What a member is started with: mutual TLS with these files. */
    List<String> memberArgs() {
        return List.of("--cert-file", memberCert.toString(), "--key-file", memberKey.toString(),
                "--trusted-ca-file", ca.toString(), "--client-cert-auth", "true");
    }

    private static void sign(Path dir, String name, Path key, Path cert, Path ca, Path caKey, Path ext)
            throws IOException, InterruptedException {
        Path request = dir.resolve(name + ".csr");
        openssl(dir, "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=" + name,
                "-keyout", key.toString(), "-out", request.toString());
        List<String> args = new ArrayList<>(List.of("x509", "-req", "-in", request.toString(), "-CA", ca.toString(),
                "-CAkey", caKey.toString(), "-CAcreateserial", "-days", "2", "-out", cert.toString()));
        if (ext != null) {
            args.addAll(List.of("-extfile", ext.toString()));
        }
        openssl(dir, args.toArray(new String[0]));
    }

    private static void openssl(Path dir, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("openssl"));
        command.addAll(List.of(args));
        Process p;
        try {
            p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            throw new IOException("tenure bench --tls makes its certificates with openssl, which did not start: " + e.getMessage(), e);
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("openssl " + String.join(" ", args) + " failed: " + output.strip());
        }
    }
}
