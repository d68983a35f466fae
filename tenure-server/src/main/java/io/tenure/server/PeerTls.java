package io.tenure.server;

import io.tenure.server.security.PemFiles;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Objects;

/**
 * Mutual TLS between the members of a cluster, from PEM files: this member's certificate (chain)
 * and private key, and the CA that signed every member's certificate. A member presents its
 * certificate on each connection it makes and asks one of every member that connects; a peer
 * whose certificate the CA did not sign cannot connect, so it can neither vote nor take part in
 * replication.
 *
 * @param certFile      this member's certificate, PEM, followed by any intermediate certificates ({@code --peer-cert-file})
 * @param keyFile       its private key, PEM, PKCS#8 ({@code BEGIN PRIVATE KEY}) or PKCS#1 RSA, not encrypted ({@code --peer-key-file})
 * @param trustedCaFile the CA certificate(s) that sign members' certificates, PEM ({@code --peer-trusted-ca-file})
 */
public record PeerTls(Path certFile, Path keyFile, Path trustedCaFile) {
    public PeerTls {
        Objects.requireNonNull(certFile, "certFile");
        Objects.requireNonNull(keyFile, "keyFile");
        Objects.requireNonNull(trustedCaFile, "trustedCaFile");
    }

    /**
     * Reads and checks the three files: each parses, the key belongs to the certificate, the CA
     * signed the certificate, and the certificate is valid today.
     *
     * @throws IllegalArgumentException naming the file (and its flag) and what is wrong with it
     */
    public PeerTls validate() {
        Material material = load();
        X509Certificate own = material.chain.get(0);
        try {
            own.checkValidity();
        } catch (CertificateException e) {
            throw new IllegalArgumentException("peer certificate " + certFile + " (--peer-cert-file) is not valid now: "
                    + e.getMessage() + " (valid " + own.getNotBefore().toInstant() + " to " + own.getNotAfter().toInstant() + ")");
        }
        if (!PemFiles.signedByOne(material.chain, material.trusted)) {
            throw new IllegalArgumentException("peer certificate " + certFile + " (--peer-cert-file, subject "
                    + own.getSubjectX500Principal().getName() + ") is not signed by a CA in " + trustedCaFile
                    + " (--peer-trusted-ca-file): the other members would refuse this member");
        }
        return this;
    }

    /**
     * A PKCS#12 key store holding this member's key and certificate chain (alias {@code member}),
     * and the trusted CA certificates ({@code ca-0}, {@code ca-1}, ...), protected by {@code password}.
     *
     * @throws IllegalArgumentException when a file cannot be read or is not what it should be
     */
    public byte[] keyStore(char[] password) {
        Material material = load();
        try {
            KeyStore store = KeyStore.getInstance("PKCS12");
            store.load(null, password);
            store.setKeyEntry("member", material.key, password, material.chain.toArray(new X509Certificate[0]));
            for (int i = 0; i < material.trusted.size(); i++) {
                store.setCertificateEntry("ca-" + i, material.trusted.get(i));
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            store.store(out, password);
            return out.toByteArray();
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("peer TLS: cannot build a key store from " + certFile + " and " + keyFile
                    + ": " + e.getMessage(), e);
        }
    }

    private record Material(PrivateKey key, List<X509Certificate> chain, List<X509Certificate> trusted) {}

    private Material load() {
        List<X509Certificate> chain = PemFiles.certificates(certFile, "--peer-cert-file");
        List<X509Certificate> trusted = PemFiles.certificates(trustedCaFile, "--peer-trusted-ca-file");
        PrivateKey key = PemFiles.privateKey(keyFile, "--peer-key-file");
        if (!PemFiles.matches(key, chain.get(0))) {
            throw new IllegalArgumentException("peer key " + keyFile + " (--peer-key-file) is not the key of certificate "
                    + certFile + " (--peer-cert-file)");
        }
        return new Material(key, chain, trusted);
    }
}
