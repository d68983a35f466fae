package io.tenure.it.net;

import io.tenure.testing.MemberProcess;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Real {@code tenure server} members of a {@link NetLab}, each in its own namespace: a
 * {@link MemberProcess} bound to the member's address ({@code --host}, which the peer port binds too
 * through the member's {@code --peers} entry) and started through {@link NetLab#wrap} ({@code ip netns
 * exec}, which execs in place, so the pid is the server's), with the same fixed ports in every
 * namespace, since each has its own address. Clients reach a member from the root namespace at its
 * {@link MemberProcess#endpoint()}.
 */
public final class NetMember {
    /** The same ports in every namespace: no two members share an address, so none collide. */
    public static final int CLIENT_PORT = 7070;
    public static final int PEER_PORT = 7071;
    public static final int HTTP_PORT = 7080;

    private NetMember() {
    }

    /**
     * One member per lab member, each with {@code --peers} naming every lab member at its address,
     * data in {@code dir/NAME} and log {@code dir/NAME.log}; none is started.
     */
    public static List<MemberProcess> cluster(NetLab lab, Path dir, List<String> extraArgs) {
        String peers = lab.members().stream().map(m -> m + "=" + lab.address(m) + ":" + PEER_PORT).collect(Collectors.joining(","));
        List<MemberProcess> all = new ArrayList<>();
        for (String member : lab.members()) {
            all.add(MemberProcess.builder(member, dir.resolve(member)).logFile(dir.resolve(member + ".log"))
                    .host(lab.address(member)).wrapper(command -> lab.wrap(member, command))
                    .clientPort(CLIENT_PORT).peerPort(PEER_PORT).httpPort(HTTP_PORT).peers(peers).args(extraArgs).build());
        }
        return all;
    }
}
