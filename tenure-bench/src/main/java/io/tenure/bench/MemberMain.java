package io.tenure.bench;

import io.tenure.server.ServerConfig;
import io.tenure.server.TenureServer;
import java.nio.file.Path;

/**
 * A member for the bench when {@code io.tenure.cli.TenureCli} is not on the class path (this
 * module's own tests: the CLI depends on the bench, not the other way). It starts
 * {@link TenureServer} with {@link ServerConfig#defaults()} and the same few settings the bench
 * passes to {@code tenure server}: {@code --id --peers --client-port --peer-port --http-port --text-port --data-dir}, and
 * for TLS {@code --cert-file --key-file --trusted-ca-file --client-cert-auth true}.
 */
public final class MemberMain {
    private MemberMain() {
    }

    public static void main(String[] args) throws Exception {
        ServerConfig config = ServerConfig.defaults();
        String peers = null;
        Integer peerPort = null;
        Path certFile = null;
        Path keyFile = null;
        Path trustedCaFile = null;
        boolean clientCertAuth = false;
        for (int i = 0; i + 1 < args.length; i += 2) {
            String value = args[i + 1];
            switch (args[i]) {
                case "server" -> i--; // the subcommand word, for a command line shaped like the CLI's
                case "--id" -> config = config.withMemberName(value);
                case "--peers" -> peers = value;
                case "--client-port" -> config = config.withClientPort(Integer.parseInt(value));
                case "--peer-port" -> peerPort = Integer.parseInt(value);
                case "--http-port" -> config = config.withHttpPort(Integer.parseInt(value));
                case "--text-port" -> config = config.withText(config.text().withPort(
                        value.equals("off") ? io.tenure.server.text.TextSettings.OFF : Integer.parseInt(value)));
                case "--data-dir" -> config = config.withDataDir(Path.of(value));
                case "--cert-file" -> certFile = Path.of(value);
                case "--key-file" -> keyFile = Path.of(value);
                case "--trusted-ca-file" -> trustedCaFile = Path.of(value);
                case "--client-cert-auth" -> clientCertAuth = Boolean.parseBoolean(value);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (peers != null) {
            config = config.withPeers(ServerConfig.parsePeers(peers));
        }
        if (peerPort != null) {
            config = config.withPeerPort(peerPort);
        }
        if (certFile != null) {
            config = config.withTls(new io.tenure.server.security.ClientTls(certFile, keyFile, trustedCaFile, clientCertAuth));
        }
        TenureServer server = TenureServer.start(config.validate());
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownGracefully, "bench-member-shutdown"));
        System.out.println("tenure: member " + config.memberName() + " serving clients on " + config.host() + ":" + server.clientPort());
        System.out.flush();
        server.awaitTermination();
        System.exit(1);
    }
}
