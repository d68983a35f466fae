package io.tenure.server.security;

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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Certificates and private keys from the PEM files operators already have (what openssl, cfssl
 * and cert-manager write), read with the JDK alone; every failure names the file and its flag.
 * Used for the members' own TLS ({@link ClientTls}) and for the peers' ({@code PeerTls}).
 */
public final class PemFiles {
    private static final Pattern PEM = Pattern.compile(
            "-----BEGIN ([A-Z0-9 ]+)-----([A-Za-z0-9+/=\\s]*?)-----END \\1-----");

    private PemFiles() {
    }

    /**
     * The modification times and sizes of {@code files} (a {@code null} file is skipped; a missing
     * one counts as -1, -1, so a rotation that moves files in is seen when they are back): what a
     * reload compares to tell whether a file changed since it was last read.
     */
    public static List<Long> stamp(Path... files) {
        List<Long> stamps = new ArrayList<>();
        for (Path file : files) {
            if (file == null) {
                continue;
            }
            try {
                stamps.add(Files.getLastModifiedTime(file).toMillis());
                stamps.add(Files.size(file));
            } catch (IOException e) {
                stamps.add(-1L);
                stamps.add(-1L);
            }
        }
        return stamps;
    }

    /** Whether a CA of {@code trusted} signed the top of {@code chain} (or is it). */
    public static boolean signedByOne(List<X509Certificate> chain, List<X509Certificate> trusted) {
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

    /** Whether {@code key} is the private key of {@code cert}'s public key (a signature made with one checks with the other). */
    public static boolean matches(PrivateKey key, X509Certificate cert) {
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
            byte[] probe = "tenure key check".getBytes(StandardCharsets.US_ASCII);
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

    /** The certificates of a PEM file, in file order (a chain: the certificate, then its intermediates). */
    public static List<X509Certificate> certificates(Path file, String flag) {
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

    /** The unencrypted private key of a PEM file: PKCS#8, or PKCS#1 RSA. */
    public static PrivateKey privateKey(Path file, String flag) {
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
