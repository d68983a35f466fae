package io.tenure.testing;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

import io.tenure.server.PeerTls;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A test CA that signs member and client certificates, written as the PEM files the members'
 * {@code --peer-...-file} and {@code --cert-file}/{@code --key-file}/{@code --trusted-ca-file} flags
 * and the SDK's {@code tls(...)} take. For tests only: its keys are made fresh for each CA.
 */
public final class TestCertificates {
    private static final AtomicLong SERIAL = new AtomicLong(System.nanoTime());

    private final Path dir;
    private final String name;
    private final KeyPair caKey;
    private final X509Certificate ca;

    /** A self-signed CA named {@code name}; its files go to {@code dir}. */
    public TestCertificates(Path dir, String name) {
        try {
            this.dir = Files.createDirectories(dir);
            this.name = name;
            this.caKey = ecKey();
            X500Name subject = new X500Name("CN=" + name);
            JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, serial(), notBefore(),
                    notAfter(Duration.ofDays(1)), subject, caKey.getPublic());
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            this.ca = sign(builder, caKey);
            Files.writeString(caFile(), pem("CERTIFICATE", ca.getEncoded()));
        } catch (IOException | GeneralSecurityException | org.bouncycastle.operator.OperatorCreationException e) {
            throw new IllegalStateException(e);
        }
    }

    public Path caFile() {
        return dir.resolve(name + "-ca.pem");
    }

    /** A certificate for {@code member} (CN and a SAN of 127.0.0.1), valid from an hour ago for {@code validFor}. */
    public PeerTls member(String member, Duration validFor) {
        return member(member, validFor, "127.0.0.1");
    }

    /**
     * A certificate for {@code member} (CN) naming {@code host} as its one SAN (an IP address, or
     * a DNS name), valid from an hour ago for {@code validFor}; its files are {@code <ca>-<member>.pem/.key}.
     */
    public PeerTls member(String member, Duration validFor, String host) {
        return member(member, validFor, java.util.List.of(host));
    }

    /**
     * A certificate for {@code member} (CN) naming each of {@code hosts} as a SAN (IP addresses or
     * DNS names), valid from an hour ago for {@code validFor}; its files are
     * {@code <ca>-<member>.pem/.key}, written over any earlier ones of that member.
     */
    public PeerTls member(String member, Duration validFor, java.util.List<String> hosts) {
        try {
            KeyPair key = ecKey();
            JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(new X500Name("CN=" + name),
                    serial(), notBefore(), notAfter(validFor), new X500Name("CN=" + member), key.getPublic());
            GeneralName[] names = hosts.stream().distinct().map(host -> new GeneralName(
                    host.matches("[0-9.]+|.*:.*") ? GeneralName.iPAddress : GeneralName.dNSName, host)).toArray(GeneralName[]::new);
            builder.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(names));
            X509Certificate cert = sign(builder, caKey);
            Path certFile = dir.resolve(name + "-" + member + ".pem");
            Path keyFile = dir.resolve(name + "-" + member + ".key");
            Files.writeString(certFile, pem("CERTIFICATE", cert.getEncoded()));
            Files.writeString(keyFile, pem("PRIVATE KEY", key.getPrivate().getEncoded()));
            return new PeerTls(certFile, keyFile, caFile());
        } catch (IOException | GeneralSecurityException | org.bouncycastle.operator.OperatorCreationException e) {
            throw new IllegalStateException(e);
        }
    }

    public PeerTls member(String member) {
        return member(member, Duration.ofDays(1));
    }

    private static KeyPair ecKey() throws GeneralSecurityException {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
        generator.initialize(256);
        return generator.generateKeyPair();
    }

    private static X509Certificate sign(JcaX509v3CertificateBuilder builder, KeyPair signer)
            throws GeneralSecurityException, org.bouncycastle.operator.OperatorCreationException {
        return new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(signer.getPrivate())));
    }

    private static BigInteger serial() {
        return BigInteger.valueOf(SERIAL.incrementAndGet());
    }

    private static Date notBefore() {
        return Date.from(Instant.now().minus(Duration.ofHours(1)));
    }

    private static Date notAfter(Duration validFor) {
        return Date.from(Instant.now().minus(Duration.ofHours(1)).plus(validFor));
    }

    /** DER bytes as a PEM block of {@code type} ({@code CERTIFICATE}, {@code PRIVATE KEY}, ...). */
    public static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }
}
