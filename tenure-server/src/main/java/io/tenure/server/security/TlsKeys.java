package io.tenure.server.security;

import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.netty.handler.ssl.ClientAuth;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.grpc.netty.shaded.io.netty.handler.ssl.SslContextBuilder;
import java.io.IOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.Principal;
import java.security.PrivateKey;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedKeyManager;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A member's certificate, key and trusted client CAs for its client-facing ports, re-read when
 * their files change, so a certificate rotation needs no restart and no failover.
 *
 * <p>The gRPC, HTTP and text servers are built once with this class's key manager and trust
 * manager; each handshake asks them for the material current at that moment. A connection made
 * before a rotation keeps the certificate it was made with (TLS fixes it at the handshake), and
 * every connection made after it gets the new one. {@link #reloadIfChanged()} runs every second
 * on the member's timer; a change that does not load (a key written before its certificate, a
 * certificate not yet valid) is logged and the material in use stays, until the files change again.
 *
 * <p>Each loaded certificate gets an alias of its own ({@code tenure-<generation>}): a handshake
 * chooses an alias, then asks for its chain and key, and the two answers must belong together
 * even if a reload lands between the questions; the previous generation stays answerable for that.
 */
public final class TlsKeys {
    private static final Logger LOG = LoggerFactory.getLogger(TlsKeys.class);
    /** TLS 1.2 and 1.3 only: the versions before have known weaknesses (RFC 8996). */
    static final String[] PROTOCOLS = {"TLSv1.3", "TLSv1.2"};

    private final ClientTls settings;
    private final Object reloading = new Object();
    private volatile Identity current;
    private volatile Identity previous;
    private volatile X509ExtendedTrustManager trust;
    /** The files' modification times and sizes when last looked at (loaded or refused). */
    private List<Long> stamp;
    private long generation;

    private record Identity(String alias, PrivateKey key, X509Certificate[] chain) {
    }

    private TlsKeys(ClientTls settings) {
        this.settings = settings;
    }

    /**
     * Loads the files of {@code settings}.
     *
     * @throws IllegalArgumentException when they do not load, naming the file and its flag
     */
    public static TlsKeys load(ClientTls settings) {
        TlsKeys keys = new TlsKeys(Objects.requireNonNull(settings, "settings"));
        synchronized (keys.reloading) {
            keys.stamp = keys.stampOfFiles();
            keys.install(settings.load());
        }
        return keys;
    }

    public ClientTls settings() {
        return settings;
    }

    /** The certificate handshakes present now (the first of the chain). */
    public X509Certificate certificate() {
        return current.chain[0];
    }

    /**
     * Re-reads the files if one changed since they were last read. Returns whether new material
     * is in use; on a failure the old stays and the failure is logged (once per change).
     */
    public boolean reloadIfChanged() {
        synchronized (reloading) {
            List<Long> now = stampOfFiles();
            if (now.equals(stamp)) {
                return false;
            }
            stamp = now;
            try {
                install(settings.load());
            } catch (IllegalArgumentException e) {
                LOG.warn("event=tls_reload_refused reason=\"{}\" (the certificate in use stays)", e.getMessage());
                return false;
            }
            X509Certificate cert = current.chain[0];
            LOG.info("event=tls_reloaded subject=\"{}\" serial={} not_after={}", cert.getSubjectX500Principal().getName(),
                    cert.getSerialNumber().toString(16), cert.getNotAfter().toInstant());
            return true;
        }
    }

    private void install(ClientTls.Material material) {
        X509ExtendedTrustManager newTrust = material.trusted().isEmpty() ? null : trustManagerOf(material.trusted());
        Identity next = new Identity("tenure-" + (++generation), material.key(),
                material.chain().toArray(new X509Certificate[0]));
        previous = current;
        current = next;
        trust = newTrust;
    }

    private List<Long> stampOfFiles() {
        return PemFiles.stamp(settings.certFile(), settings.keyFile(), settings.trustedCaFile());
    }

    private static X509ExtendedTrustManager trustManagerOf(List<X509Certificate> cas) {
        try {
            KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
            store.load(null, null);
            for (int i = 0; i < cas.size(); i++) {
                store.setCertificateEntry("ca-" + i, cas.get(i));
            }
            TrustManagerFactory factory = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            factory.init(store);
            for (TrustManager manager : factory.getTrustManagers()) {
                if (manager instanceof X509ExtendedTrustManager x509) {
                    return x509;
                }
            }
            throw new IllegalStateException("the JDK offers no X.509 trust manager");
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalArgumentException("--trusted-ca-file " + "cannot be used as a trust store: " + e.getMessage(), e);
        }
    }

    /** The server context of the gRPC client port (HTTP/2 with ALPN), TLS 1.2 or later. */
    public SslContext grpcContext() throws SSLException {
        return withClientAuth(GrpcSslContexts.configure(SslContextBuilder.forServer(new Keys()))).build();
    }

    /** The server context of the text port (a plain TLS stream), TLS 1.2 or later. */
    public SslContext textContext() throws SSLException {
        return withClientAuth(SslContextBuilder.forServer(new Keys())).build();
    }

    private SslContextBuilder withClientAuth(SslContextBuilder builder) {
        builder.protocols(PROTOCOLS);
        if (settings.trustedCaFile() != null) {
            builder.trustManager(new Trust());
        }
        return builder.clientAuth(settings.clientCertAuth() ? ClientAuth.REQUIRE : ClientAuth.NONE);
    }

    /** A JDK context for the HTTP port (Jetty); the protocols and client authentication are set on Jetty's factory. */
    public SSLContext jdkContext() {
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(new javax.net.ssl.KeyManager[] {new Keys()},
                    settings.trustedCaFile() == null ? null : new TrustManager[] {new Trust()}, null);
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("the JDK's TLS is not usable: " + e.getMessage(), e);
        }
    }

    /** TLS 1.2 and 1.3, for the fronts that configure their protocols themselves. */
    public static String[] protocols() {
        return PROTOCOLS.clone();
    }

    /** Whether a key of {@code algorithm} can serve a handshake that asks for {@code keyType} (as the JDK and Netty name them). */
    static boolean serves(String algorithm, String keyType) {
        if (keyType == null) {
            return true;
        }
        return switch (algorithm) {
            case "RSA" -> keyType.equals("RSA") || keyType.equals("RSASSA-PSS") || keyType.equals("DH_RSA") || keyType.equals("ECDHE_RSA");
            case "EC" -> keyType.startsWith("EC");
            case "Ed25519", "EdDSA" -> keyType.equals("EdDSA") || keyType.equals("Ed25519");
            default -> keyType.equals(algorithm);
        };
    }

    /** Answers from the current identity; a chain or key asked by alias comes from the generation that alias names. */
    private final class Keys extends X509ExtendedKeyManager {
        private Identity byAlias(String alias) {
            Identity now = current;
            if (now.alias.equals(alias)) {
                return now;
            }
            Identity before = previous;
            return before != null && before.alias.equals(alias) ? before : null;
        }

        private String alias(String keyType) {
            Identity now = current;
            return serves(now.key.getAlgorithm(), keyType) ? now.alias : null;
        }

        private String alias(String[] keyTypes) {
            if (keyTypes == null) {
                return current.alias;
            }
            for (String keyType : keyTypes) {
                String alias = alias(keyType);
                if (alias != null) {
                    return alias;
                }
            }
            return null;
        }

        @Override
        public String[] getServerAliases(String keyType, Principal[] issuers) {
            String alias = alias(keyType);
            return alias == null ? null : new String[] {alias};
        }

        @Override
        public String chooseServerAlias(String keyType, Principal[] issuers, Socket socket) {
            return alias(keyType);
        }

        @Override
        public String chooseEngineServerAlias(String keyType, Principal[] issuers, SSLEngine engine) {
            return alias(keyType);
        }

        @Override
        public X509Certificate[] getCertificateChain(String alias) {
            Identity identity = byAlias(alias);
            return identity == null ? null : identity.chain.clone();
        }

        @Override
        public PrivateKey getPrivateKey(String alias) {
            Identity identity = byAlias(alias);
            return identity == null ? null : identity.key;
        }

        // A member presents its certificate as a server only.
        @Override
        public String[] getClientAliases(String keyType, Principal[] issuers) {
            return null;
        }

        @Override
        public String chooseClientAlias(String[] keyTypes, Principal[] issuers, Socket socket) {
            return null;
        }

        @Override
        public String chooseEngineClientAlias(String[] keyTypes, Principal[] issuers, SSLEngine engine) {
            return null;
        }
    }

    /** Checks clients' certificates against the CAs loaded last. */
    private final class Trust extends X509ExtendedTrustManager {
        private X509ExtendedTrustManager delegate() throws CertificateException {
            X509ExtendedTrustManager now = trust;
            if (now == null) {
                throw new CertificateException("no trusted CA is loaded (--trusted-ca-file)");
            }
            return now;
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            delegate().checkClientTrusted(chain, authType, socket);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            delegate().checkClientTrusted(chain, authType, engine);
        }

        @Override
        public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            delegate().checkClientTrusted(chain, authType);
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket) throws CertificateException {
            throw new CertificateException("a member's client ports check clients only");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine) throws CertificateException {
            throw new CertificateException("a member's client ports check clients only");
        }

        @Override
        public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
            throw new CertificateException("a member's client ports check clients only");
        }

        @Override
        public X509Certificate[] getAcceptedIssuers() {
            X509TrustManager now = trust;
            return now == null ? new X509Certificate[0] : now.getAcceptedIssuers();
        }
    }
}
