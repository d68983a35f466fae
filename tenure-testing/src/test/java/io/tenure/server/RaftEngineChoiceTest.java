package io.tenure.server;

import io.tenure.server.raft.EngineProbe;
import io.tenure.testing.TenureCluster;
import io.tenure.testing.TestCertificates;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --raft-engine auto}: which engine a member runs, and how a joining member learns the running members'. */
class RaftEngineChoiceTest {
    @TempDir
    Path dir;

    private static final Map<String, String> THREE = Map.of("n1", "127.0.0.1:7071", "n2", "127.0.0.1:7171", "n3", "127.0.0.1:7271");

    private ServerConfig auto(String name) {
        return ServerConfig.defaults().withDataDir(dir.resolve(name));
    }

    @Test
    void aNewDirectoryGetsJraftInAClusterAndRatisAlone() throws IOException {
        assertThat(TenureServer.engineFor(auto("alone"))).isEqualTo(RaftEngine.RATIS);
        assertThat(TenureServer.engineFor(auto("three").withPeers(new java.util.LinkedHashMap<>(THREE)))).isEqualTo(RaftEngine.JRAFT);
        assertThat(TenureServer.engineFor(auto("only-itself").withPeers(Map.of("n1", "127.0.0.1:7071")))).isEqualTo(RaftEngine.RATIS);
        PeerTls tls = new TestCertificates(dir.resolve("certs"), "ca").member("n1");
        assertThat(TenureServer.engineFor(auto("tls-alone").withPeerTls(tls))).isEqualTo(RaftEngine.JRAFT);
        // Named engines are taken as given (a data directory of the other one is refused when it opens).
        assertThat(TenureServer.engineFor(auto("named").withRaftEngine(RaftEngine.RATIS).withPeers(new java.util.LinkedHashMap<>(THREE))))
                .isEqualTo(RaftEngine.RATIS);
    }

    @Test
    void anExistingDirectoryKeepsItsEngineWhateverThePeers() throws IOException {
        Path ratis = dir.resolve("made-by-ratis");
        Files.createDirectories(ratis);
        // A directory of the release before engines were recorded: no engine= line, so Ratis.
        Files.writeString(ratis.resolve("member.properties"), "cluster=tenure\nmember=n1\nlayout=1\ninitialized=true\n");
        assertThat(TenureServer.engineFor(ServerConfig.defaults().withDataDir(ratis).withPeers(new java.util.LinkedHashMap<>(THREE))))
                .isEqualTo(RaftEngine.RATIS);
        try (TenureCluster one = TenureCluster.builder().members(1).dataDir(dir.resolve("jraft-member"))
                .config(c -> c.withRaftEngine(RaftEngine.JRAFT)).start()) {
            assertThat(one.server(0).raftEngine()).isEqualTo(RaftEngine.JRAFT);
            assertThat(one.blocking(0).status(io.tenure.proto.v1.StatusRequest.getDefaultInstance()).getRaftEngine()).isEqualTo("jraft");
            assertThat(TenureServer.engineFor(ServerConfig.defaults().withDataDir(one.config(0).dataDir()))).isEqualTo(RaftEngine.JRAFT);
        }
    }

    @Test
    void aJoiningMemberTakesTheEngineItsPeersSpeak() throws IOException {
        try (TenureCluster ratis = TenureCluster.builder().members(1).dataDir(dir.resolve("r"))
                .config(c -> c.withRaftEngine(RaftEngine.RATIS)).start();
             TenureCluster jraft = TenureCluster.builder().members(1).dataDir(dir.resolve("j"))
                .config(c -> c.withRaftEngine(RaftEngine.JRAFT)).start()) {
            assertThat(ratis.blocking(0).status(io.tenure.proto.v1.StatusRequest.getDefaultInstance()).getRaftEngine()).isEqualTo("ratis");
            String ratisPeer = ratis.config(0).peerAddress();
            String jraftPeer = jraft.config(0).peerAddress();
            assertThat(EngineProbe.ofRunningMembers(List.of(ratisPeer), Duration.ofSeconds(5))).isEqualTo(RaftEngine.RATIS);
            assertThat(EngineProbe.ofRunningMembers(List.of(jraftPeer), Duration.ofSeconds(5))).isEqualTo(RaftEngine.JRAFT);

            ServerConfig joining = auto("joiner").withMemberName("n2").withJoin(true)
                    .withPeers(new java.util.LinkedHashMap<>(Map.of("n1", ratisPeer, "n2", "127.0.0.1:" + closedPort())));
            assertThat(TenureServer.engineFor(joining)).isEqualTo(RaftEngine.RATIS);
            joining = joining.withPeers(new java.util.LinkedHashMap<>(Map.of("n1", jraftPeer, "n2", "127.0.0.1:" + closedPort())));
            assertThat(TenureServer.engineFor(joining)).isEqualTo(RaftEngine.JRAFT);
        }
    }

    @Test
    void aJoiningMemberThatReachesNoPeerIsToldToNameTheEngine() throws IOException {
        int down = closedPort();
        ServerConfig joining = auto("joiner").withMemberName("n2").withJoin(true)
                .withPeers(new java.util.LinkedHashMap<>(Map.of("n1", "127.0.0.1:" + down, "n2", "127.0.0.1:" + closedPort())));
        assertThatThrownBy(() -> TenureServer.engineFor(joining)).isInstanceOf(IOException.class)
                .hasMessageContaining("cannot tell which Raft engine the running members use: none answered on its peer port (127.0.0.1:" + down)
                .hasMessageContaining("start this member with --raft-engine ratis or jraft");
    }

    /** A port nothing listens on (bound, then released). */
    private static int closedPort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
