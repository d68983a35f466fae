package io.tenure.server.security;

import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Objects;

/**
 * TLS on the ports clients reach: the gRPC client port, the HTTP port and the text port, all
 * with one certificate, from PEM files that are re-read when they change ({@link TlsKeys}).
 *
 * @param certFile       this member's certificate, PEM, followed by any intermediates ({@code --cert-file},
 *                       alias {@code --tls-cert})
 * @param keyFile        its private key, PEM, PKCS#8 or PKCS#1 RSA, not encrypted ({@code --key-file},
 *                       alias {@code --tls-key})
 * @param trustedCaFile  the CA certificate(s) that sign clients' certificates, PEM ({@code --trusted-ca-file});
 *                       null: clients are not asked for one
 * @param clientCertAuth whether every client must present a certificate a CA of {@code trustedCaFile}
 *                       signed ({@code --client-cert-auth}): mutual TLS, and the certificate names the principal
 */
public record ClientTls(Path certFile, Path keyFile, Path trustedCaFile, boolean clientCertAuth) {
    public ClientTls {
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
    }

    /** Server TLS without client certificates. */
    public static ClientTls of(Path certFile, Path keyFile) {
        return new ClientTls(certFile, keyFile, null, false);
    }

    /** Mutual TLS: every client presents a certificate that a CA of {@code trustedCaFile} signed. */
    public ClientTls withClientCertAuth(Path trustedCaFile) {
        return new ClientTls(certFile, keyFile, Objects.requireNonNull(trustedCaFile, "trustedCaFile"), true);
    }

    /**
     * Reads and checks the files: each parses, the key belongs to the certificate, the certificate
     * is valid now, and {@code --client-cert-auth} has a CA to check clients against.
     *
     * @throws IllegalArgumentException naming the file, its flag and what is wrong
     */
    public ClientTls validate() {
        if (clientCertAuth && trustedCaFile == null) {
            throw new IllegalArgumentException("--client-cert-auth needs --trusted-ca-file: the CA that signs the clients' certificates");
        }
        load();
        return this;
    }

    /** The key, the chain and the trusted CAs (empty without {@code trustedCaFile}), checked as {@link #validate} says. */
    Material load() {
        List<X509Certificate> chain = PemFiles.certificates(certFile, "--cert-file");
        PrivateKey key = PemFiles.privateKey(keyFile, "--key-file");
        if (!PemFiles.matches(key, chain.get(0))) {
            throw new IllegalArgumentException("key " + keyFile + " (--key-file) is not the key of certificate " + certFile
                    + " (--cert-file)");
        }
        X509Certificate own = chain.get(0);
        try {
            own.checkValidity();
        } catch (CertificateException e) {
            throw new IllegalArgumentException("certificate " + certFile + " (--cert-file) is not valid now: " + e.getMessage()
                    + " (valid " + own.getNotBefore().toInstant() + " to " + own.getNotAfter().toInstant() + ")");
        }
        List<X509Certificate> trusted = trustedCaFile == null ? List.of() : PemFiles.certificates(trustedCaFile, "--trusted-ca-file");
        return new Material(key, chain, trusted);
    }

    record Material(PrivateKey key, List<X509Certificate> chain, List<X509Certificate> trusted) {
    }
}
