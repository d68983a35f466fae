package io.tenure.server;

import io.tenure.testing.FreePorts;
import io.tenure.testing.TenureCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code --peer-listen-port}: the peer server binds it, while the peers map names the port the others use (a proxy's).
 * (The setting's validation: tenure-server's PeerListenPortSettingTest.)
 */
class PeerListenPortTest {
    @TempDir
    Path dir;

    @Test
    void thePeerServerBindsTheListenPortNotTheAdvertisedOne() throws Exception {
        int[] ports = FreePorts.take(2);
        int advertised = ports[0];
        int listen = ports[1];
        try (TenureCluster m = TenureCluster.builder().dataDir(dir)
                .config(c -> c.withPeers(Map.of("n1", "127.0.0.1:" + advertised)).withPeerListenPort(listen)).start()) {
            ServerConfig config = m.config(0);
            assertThat(config.peerPort()).isEqualTo(advertised);
            assertThat(config.peerBindPort()).isEqualTo(listen);
            try (Socket peer = new Socket(InetAddress.getLoopbackAddress(), listen)) {
                assertThat(peer.isConnected()).as("the peer server listens on " + listen).isTrue();
            }
            try (ServerSocket free = new ServerSocket(advertised, 1, InetAddress.getLoopbackAddress())) {
                assertThat(free.getLocalPort()).as("the advertised port is left to the proxy").isEqualTo(advertised);
            }
            assertThat(m.server(0).member().members()).singleElement()
                    .satisfies(member -> assertThat(member.getPeerAddress()).isEqualTo("127.0.0.1:" + advertised));
        }
    }
}
