package io.tenure.server;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code --peer-listen-port} is refused by name where it cannot work (a member binding it: tenure-testing's PeerListenPortTest). */
class PeerListenPortSettingTest {
    @TempDir
    Path dir;

    @Test
    void aListenPortEqualToTheClientOrHttpPortIsRefusedByName() {
        ServerConfig config = ServerConfig.defaults().withDataDir(dir).withClientPort(7170).withHttpPort(7180).withPeerListenPort(7170);
        assertThatThrownBy(config::validate).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("peer listen port 7170");
        assertThatThrownBy(() -> ServerConfig.defaults().withPeerListenPort(70000).validate())
                .hasMessageContaining("peer listen port must be between 0 and 65535");
    }
}
