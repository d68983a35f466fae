package io.tenure.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --peer-listen-port}: the peer server binds it, while the peers map names the port the others use (a proxy's). */
class PeerListenPortTest {
    @TempDir
    Path dir;

    @Test
    void thePeerServerBindsTheListenPortNotTheAdvertisedOne() throws Exception {
        int[] ports = FreePorts.take(2);
        int advertised = ports[0];
        int listen = ports[1];
        ServerConfig config = ServerConfig.defaults().withHttpPort(0).withDataDir(dir).withClientPort(0)
                .withPeers(Map.of("n1", "127.0.0.1:" + advertised)).withPeerListenPort(listen);
        assertThat(config.peerPort()).isEqualTo(advertised);
        assertThat(config.peerBindPort()).isEqualTo(listen);
        try (RunningMember m = RunningMember.start(config)) {
            try (Socket peer = new Socket(InetAddress.getLoopbackAddress(), listen)) {
                assertThat(peer.isConnected()).as("the peer server listens on " + listen).isTrue();
            }
            try (ServerSocket free = new ServerSocket(advertised, 1, InetAddress.getLoopbackAddress())) {
                assertThat(free.getLocalPort()).as("the advertised port is left to the proxy").isEqualTo(advertised);
            }
            assertThat(m.server.member().members()).singleElement()
                    .satisfies(member -> assertThat(member.getPeerAddress()).isEqualTo("127.0.0.1:" + advertised));
        }
    }

    @Test
    void aListenPortEqualToTheClientOrHttpPortIsRefusedByName() {
        ServerConfig config = ServerConfig.defaults().withDataDir(dir).withClientPort(7170).withHttpPort(7180).withPeerListenPort(7170);
        assertThatThrownBy(config::validate).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("peer listen port 7170");
        assertThatThrownBy(() -> ServerConfig.defaults().withPeerListenPort(70000).validate())
                .hasMessageContaining("peer listen port must be between 0 and 65535");
    }
}
