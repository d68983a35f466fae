package io.tenure.server;

import io.tenure.testing.TestCertificates;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@link PeerTls}: what it accepts from its PEM files, and the error naming the file and flag for what it does not. */
class PeerTlsFilesTest {
    @TempDir
    Path dir;

    @Test
    void aMemberCertificateItsKeyAndItsCaMakeAKeyStoreWithAllThree() throws Exception {
        PeerTls tls = new TestCertificates(dir, "ca").member("n1").validate();
        char[] password = "secret".toCharArray();
        KeyStore store = KeyStore.getInstance("PKCS12");
        store.load(new ByteArrayInputStream(tls.keyStore(password)), password);
        assertThat(store.isKeyEntry("member")).isTrue();
        assertThat(((X509Certificate) store.getCertificate("member")).getSubjectX500Principal().getName()).isEqualTo("CN=n1");
        assertThat(store.isCertificateEntry("ca-0")).isTrue();
        assertThat(((X509Certificate) store.getCertificate("ca-0")).getSubjectX500Principal().getName()).isEqualTo("CN=ca");
    }

    @Test
    void aCertificateAnotherCaSignedIsRefusedNamingBothFiles() {
        PeerTls theirs = new TestCertificates(dir, "other").member("n1");
        Path ourCa = new TestCertificates(dir, "ours").caFile();
        assertThatThrownBy(() -> new PeerTls(theirs.certFile(), theirs.keyFile(), ourCa).validate())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("(--peer-cert-file, subject CN=n1) is not signed by a CA in " + ourCa)
                .hasMessageContaining("--peer-trusted-ca-file");
    }

    @Test
    void aKeyOfAnotherCertificateIsRefused() {
        TestCertificates ca = new TestCertificates(dir, "ca");
        PeerTls n1 = ca.member("n1");
        PeerTls n2 = ca.member("n2");
        assertThatThrownBy(() -> new PeerTls(n1.certFile(), n2.keyFile(), n1.trustedCaFile()).validate())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("peer key " + n2.keyFile() + " (--peer-key-file) is not the key of certificate " + n1.certFile()
                        + " (--peer-cert-file)");
    }

    @Test
    void anExpiredCertificateIsRefused() {
        // Valid from an hour ago for half an hour: expired.
        PeerTls old = new TestCertificates(dir, "ca").member("n1", Duration.ofMinutes(30));
        assertThatThrownBy(old::validate).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("peer certificate " + old.certFile() + " (--peer-cert-file) is not valid now");
    }

    @Test
    void missingOrWrongFilesAreNamedWithTheirFlag() throws Exception {
        PeerTls good = new TestCertificates(dir, "ca").member("n1");
        Path missing = dir.resolve("missing.pem");
        assertThatThrownBy(() -> new PeerTls(missing, good.keyFile(), good.trustedCaFile()).validate())
                .hasMessage("--peer-cert-file: file " + missing + " does not exist");
        assertThatThrownBy(() -> new PeerTls(good.certFile(), good.keyFile(), good.keyFile()).validate())
                .hasMessage("--peer-trusted-ca-file: " + good.keyFile() + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)");
        assertThatThrownBy(() -> new PeerTls(good.certFile(), good.certFile(), good.trustedCaFile()).validate())
                .hasMessage("--peer-key-file: " + good.certFile() + " holds no PEM private key (-----BEGIN PRIVATE KEY-----)");
        Path sec1 = dir.resolve("sec1.key");
        Files.writeString(sec1, TestCertificates.pem("EC PRIVATE KEY", new byte[] {0x30, 0x00}));
        assertThatThrownBy(() -> new PeerTls(good.certFile(), sec1, good.trustedCaFile()).validate())
                .hasMessageContaining("--peer-key-file: " + sec1 + " is an EC key in SEC1 form; convert it to PKCS#8");
        Path encrypted = dir.resolve("encrypted.key");
        Files.writeString(encrypted, TestCertificates.pem("ENCRYPTED PRIVATE KEY", new byte[] {0x30, 0x00}));
        assertThatThrownBy(() -> new PeerTls(good.certFile(), encrypted, good.trustedCaFile()).validate())
                .hasMessageContaining("--peer-key-file: " + encrypted + " is encrypted");
    }

    @Test
    void aPkcs1RsaKeyIsReadAsWellAsPkcs8() throws Exception {
        KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        KeyPair pair = generator.generateKeyPair();
        byte[] pkcs1 = PrivateKeyInfo.getInstance(pair.getPrivate().getEncoded()).parsePrivateKey().toASN1Primitive().getEncoded();
        Path key = dir.resolve("rsa.key");
        Files.writeString(key, TestCertificates.pem("RSA PRIVATE KEY", pkcs1));
        // The key parses; it is then checked against the certificate, which is another key's.
        PeerTls ecCert = new TestCertificates(dir, "ca").member("n1");
        assertThatThrownBy(() -> new PeerTls(ecCert.certFile(), key, ecCert.trustedCaFile()).validate())
                .hasMessageContaining("is not the key of certificate");
    }

    @Test
    void peerTlsOnTheRatisEngineIsRefused() {
        PeerTls tls = new TestCertificates(dir, "ca").member("n1");
        assertThatThrownBy(() -> ServerConfig.defaults().withRaftEngine(RaftEngine.RATIS).withPeerTls(tls).validate())
                .hasMessageContaining("peer TLS needs the jraft Raft engine (--raft-engine jraft or auto");
        assertThat(ServerConfig.defaults().withPeerTls(tls).validate().raftEngine()).isEqualTo(RaftEngine.AUTO);
        assertThat(ServerConfig.defaults().withRaftEngine(RaftEngine.JRAFT).withPeerTls(tls).validate().peerTls()).isEqualTo(tls);
    }
}
