package io.tenure.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FreePortsTest {

    @Test
    void portsAreDistinctBindableAndBelowTheEphemeralRange() throws Exception {
        int[] ports = FreePorts.take(200);
        assertThat(Arrays.stream(ports).distinct().count()).isEqualTo(200);
        if (FreePorts.HIGHEST != 0) {
            for (int port : ports) {
                assertThat(port).isBetween(FreePorts.LOWEST, FreePorts.HIGHEST);
            }
        }
        for (int port : new int[] {ports[0], ports[199]}) {
            try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
                assertThat(socket.getLocalPort()).isEqualTo(port);
            }
        }
    }

    @Test
    void aPortInUseOrChosenEarlierIsNotHandedOut() throws Exception {
        Set<Integer> earlier = new HashSet<>();
        for (int port : FreePorts.take(50)) {
            earlier.add(port);
        }
        try (ServerSocket inUse = new ServerSocket(FreePorts.one(), 1, InetAddress.getLoopbackAddress())) {
            Set<Integer> handedOut = new HashSet<>();
            // Far more than the span would bring the port in use back round without the bind check.
            for (int i = 0; i < 30; i++) {
                for (int port : FreePorts.take(1_000, earlier)) {
                    handedOut.add(port);
                    assertThat(port).isNotEqualTo(inUse.getLocalPort());
                    assertThat(earlier).doesNotContain(port);
                }
            }
            assertThat(handedOut.size()).isGreaterThan(1_000);
        }
    }
}
