package io.tenure.server;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.InvalidKeySpecException;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");

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
        if (!signedByOne(material.chain, material.trusted)) {
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
        List<X509Certificate> chain = certificates(certFile, "--peer-cert-file");
        List<X509Certificate> trusted = certificates(trustedCaFile, "--peer-trusted-ca-file");
        PrivateKey key = privateKey(keyFile, "--peer-key-file");
        if (!matches(key, chain.get(0))) {
            throw new IllegalArgumentException("peer key " + keyFile + " (--peer-key-file) is not the key of certificate "
                    + certFile + " (--peer-cert-file)");
        }
        return new Material(key, chain, trusted);
    }

    private static boolean signedByOne(List<X509Certificate> chain, List<X509Certificate> trusted) {
        // The chain's last certificate is the one a trusted CA must have signed (or it is that CA).
        X509Certificate top = chain.get(chain.size() - 1);
        for (X509Certificate ca : trusted) {
            if (top.equals(ca)) {
                return true;
            }
            try {
                top.verify(ca.getPublicKey());
                return true;
            } catch (GeneralSecurityException e) {
                // Not this one.
            }
        }
        return false;
    }

    private static boolean matches(PrivateKey key, X509Certificate cert) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "EdDSA" -> "Ed25519";
            default -> null;
        };
        if (algorithm == null) {
            return false;
        }
        try {
            byte[] probe = "tenure peer key check".getBytes(StandardCharsets.US_ASCII);
            Signature sign = Signature.getInstance(algorithm);
            sign.initSign(key);
            sign.update(probe);
            byte[] signature = sign.sign();
            Signature verify = Signature.getInstance(algorithm);
            verify.initVerify(cert.getPublicKey());
            verify.update(probe);
            return verify.verify(signature);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    private static String read(Path file, String flag) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException(flag + ": file " + file + " does not exist");
        } catch (IOException e) {
            throw new IllegalArgumentException(flag + ": cannot read " + file + ": " + e.getMessage());
        }
    }

    private static List<X509Certificate> certificates(Path file, String flag) {
        String text = read(file, flag);
        List<X509Certificate> certs = new ArrayList<>();
        try {
            CertificateFactory factory = CertificateFactory.getInstance("X.509");
            Matcher m = PEM.matcher(text);
            while (m.find()) {
                if (m.group(1).equals("CERTIFICATE")) {
                    try (InputStream in = new ByteArrayInputStream(Base64.getMimeDecoder().decode(m.group(2)))) {
                        certs.add((X509Certificate) factory.generateCertificate(in));
                    }
                }
            }
        } catch (CertificateException | IOException | IllegalArgumentException e) {
            throw new IllegalArgumentException(flag + ": " + file + " holds a damaged certificate: " + e.getMessage());
        }
        if (certs.isEmpty()) {
            throw new IllegalArgumentException(flag + ": " + file + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        }
        return certs;
    }

    private static PrivateKey privateKey(Path file, String flag) {
        String text = read(file, flag);
        Matcher m = PEM.matcher(text);
        while (m.find()) {
            String type = m.group(1);
            byte[] der;
            try {
                der = Base64.getMimeDecoder().decode(m.group(2));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(flag + ": " + file + " holds a damaged PEM block: " + e.getMessage());
            }
            switch (type) {
                case "PRIVATE KEY":
                    return pkcs8(der, file, flag);
                case "RSA PRIVATE KEY":
                    return pkcs8(rsaPkcs1ToPkcs8(der), file, flag);
                case "ENCRYPTED PRIVATE KEY":
                    throw new IllegalArgumentException(flag + ": " + file + " is encrypted; give an unencrypted key "
                            + "(openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8) and protect it with file permissions");
                case "EC PRIVATE KEY":
                    throw new IllegalArgumentException(flag + ": " + file + " is an EC key in SEC1 form; convert it to PKCS#8 "
                            + "(openssl pkcs8 -topk8 -nocrypt -in KEY -out KEY.pk8)");
                default:
                    // Parameters and other blocks before the key.
            }
        }
        throw new IllegalArgumentException(flag + ": " + file + " holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
    }

    private static PrivateKey pkcs8(byte[] der, Path file, String flag) {
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(der);
        for (String algorithm : new String[] {"RSA", "EC", "Ed25519"}) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (InvalidKeySpecException | java.security.NoSuchAlgorithmException e) {
                // Try the next kind.
            }
        }
        throw new IllegalArgumentException(flag + ": " + file + " holds a private key that is not RSA, EC or Ed25519, or is damaged");
    }

    /** Wraps a PKCS#1 RSAPrivateKey in a PKCS#8 PrivateKeyInfo (version 0, rsaEncryption, the key). */
    private static byte[] rsaPkcs1ToPkcs8(byte[] pkcs1) {
        byte[] algorithm = {0x30, 0x0d, 0x06, 0x09, 0x2a, (byte) 0x86, 0x48, (byte) 0x86, (byte) 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00};
        byte[] version = {0x02, 0x01, 0x00};
        byte[] octets = der(0x04, pkcs1);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(version);
        body.writeBytes(algorithm);
        body.writeBytes(octets);
        return der(0x30, body.toByteArray());
    }

    private static byte[] der(int tag, byte[] content) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.write(tag);
        int n = content.length;
        if (n < 0x80) {
            out.write(n);
        } else {
            int bytes = (32 - Integer.numberOfLeadingZeros(n) + 7) / 8;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write(n >>> (8 * i));
            }
        }
        out.writeBytes(content);
        return out.toByteArray();
    }
}
