package io.tenure.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.server.RaftEngine;
import io.tenure.server.ServerConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code tenure server}'s cluster options: parsed into the ServerConfig, or refused as usage errors at once. */
class ServerOptionsTest {
    private static final String PEERS = "n1=127.0.0.1:7071,n2=127.0.0.1:7171,n3=127.0.0.1:7271";

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    @TempDir
    Path tmp;

    private int run(String... args) {
        out.getBuffer().setLength(0);
        err.getBuffer().setLength(0);
        CommandLine commandLine = TenureCli.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        commandLine.setUsageHelpWidth(240); // one line per option, so that each default is next to its option
        return commandLine.execute(args);
    }

    private static ServerConfig config(String... args) {
        String[] all = new String[args.length + 1];
        all[0] = "server";
        System.arraycopy(args, 0, all, 1, args.length);
        CommandLine.ParseResult result = TenureCli.commandLine().parseArgs(all);
        return ((ServerCommand) result.subcommand().commandSpec().userObject()).config();
    }

    @Test
    void clusterOptionsSetTheMembersConfiguration() {
        ServerConfig config = config("--id", "n2", "--peers", PEERS, "--client-port", "7170", "--cluster", "prod",
                "--snapshot-every", "1000", "--election-timeout", "500ms", "--data-dir", "/tmp/n2");

        assertThat(config.memberName()).isEqualTo("n2");
        assertThat(config.peers()).containsExactly(Map.entry("n1", "127.0.0.1:7071"), Map.entry("n2", "127.0.0.1:7171"),
                Map.entry("n3", "127.0.0.1:7271"));
        assertThat(config.peerPort()).as("from this member's entry").isEqualTo(7171);
        assertThat(config.clientPort()).isEqualTo(7170);
        assertThat(config.clusterName()).isEqualTo("prod");
        assertThat(config.snapshotEvery()).isEqualTo(1000);
        assertThat(config.electionTimeout()).isEqualTo(Duration.ofMillis(500));
        assertThat(config.join()).isFalse();
        assertThat(config.clustered()).isTrue();
    }

    @Test
    void joinAndTheOldMemberSpellingAndAMatchingPeerPortAreAccepted() {
        ServerConfig config = config("--member", "n4", "--join", "--peers", PEERS + ",n4=127.0.0.1:7371",
                "--peer-port", "7371", "--client-port", "7370");

        assertThat(config.memberName()).isEqualTo("n4");
        assertThat(config.join()).isTrue();
        assertThat(config.peerPort()).isEqualTo(7371);
    }

    @Test
    void withoutOptionsTheDefaultsAreServerConfigs() {
        assertThat(config()).isEqualTo(ServerConfig.defaults());
    }

    @Test
    void helpListsEveryOptionWithItsDefault() {
        assertThat(run("server", "--help")).isZero();

        assertThat(out.toString())
                .contains("--id", "--member", "(default: n1)")
                .contains("--peers", "Default: none, a single member")
                .contains("--cluster", "(default: tenure)")
                .contains("--join", "(default: off)")
                .contains("--data-dir", "(default: ./tenure-data)")
                .contains("--host", "(default: 127.0.0.1)")
                .contains("--client-port", "(default: 7070)")
                .contains("--peer-port", "(default: 7071)")
                .contains("--snapshot-every", "(default: 50000)")
                .contains("--election-timeout", "(default: 300ms)")
                .contains("Exit codes", "usage error");
    }

    @Test
    void theAuditLogIsOffByDefaultHiddenFromHelpAndSetOnlyByItsFlag() {
        assertThat(config().auditLog()).as("never on by default").isNull();
        assertThat(ServerConfig.defaults().auditLog()).isNull();
        assertThat(config("--audit-log", "/tmp/n1/audit.jsonl").auditLog()).isEqualTo(Path.of("/tmp/n1/audit.jsonl"));
        // The other settings are untouched by it.
        assertThat(config("--audit-log", "/tmp/n1/audit.jsonl").withAuditLog(null)).isEqualTo(ServerConfig.defaults());

        assertThat(run("server", "--help")).isZero();
        // The safety suite's log of applies is hidden; the audit trail of who did what is not.
        assertThat(out.toString()).doesNotContain("--audit-log").contains("--audit-file");
    }

    @Test
    void theRaftEngineIsAutoByDefaultAndJraftOrRatisOnRequest() {
        assertThat(config().raftEngine()).isEqualTo(RaftEngine.AUTO);
        assertThat(config("--raft-engine", "jraft").raftEngine()).isEqualTo(RaftEngine.JRAFT);
        assertThat(config("--raft-engine", "RATIS").raftEngine()).isEqualTo(RaftEngine.RATIS);
        assertThat(config("--raft-engine", "auto").raftEngine()).isEqualTo(RaftEngine.AUTO);
        assertThat(run("server", "--raft-engine", "etcd")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--raft-engine': raft engine must be jraft, ratis or auto, got 'etcd'");
    }

    @Test
    void peerTlsNeedsItsThreeFilesAndTheJraftEngine() {
        assertThat(run("server", "--raft-engine", "jraft", "--peer-cert-file", "member.pem")).isEqualTo(2);
        assertThat(err.toString()).contains("Peer TLS needs --peer-cert-file, --peer-key-file and --peer-trusted-ca-file together; "
                + "missing: --peer-key-file, --peer-trusted-ca-file");
        String[] files = {"--peer-cert-file", "no-such-member.pem", "--peer-key-file", "no-such-member.key",
            "--peer-trusted-ca-file", "no-such-ca.pem"};
        assertThat(run(concat(new String[] {"server", "--raft-engine", "jraft"}, files))).isEqualTo(2);
        assertThat(err.toString()).contains("--peer-cert-file: file no-such-member.pem does not exist");
        assertThat(run(concat(new String[] {"server", "--raft-engine", "ratis"}, files))).isEqualTo(2);
        assertThat(err.toString()).contains("peer TLS needs the jraft Raft engine (--raft-engine jraft or auto");
    }

    private static String[] concat(String[] a, String[] b) {
        String[] all = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }

    @Test
    void aMalformedPeersListIsAUsageErrorNamingPeers() {
        for (String bad : new String[] {"", "n1", "n1=127.0.0.1", "n1=127.0.0.1:port", "n1=127.0.0.1:7071,,n2=127.0.0.1:7171",
                "n1=127.0.0.1:7071,n1=127.0.0.1:7171", "n1=127.0.0.1:99999", "bad name=127.0.0.1:7071"}) {
            assertThat(run("server", "--peers", bad)).as(bad).isEqualTo(2);
            assertThat(err.toString()).as(bad).contains("Invalid value for option '--peers': ").contains("Try 'tenure server --help'");
        }
    }

    @Test
    void anIdMissingFromPeersIsAUsageErrorNamingId() {
        assertThat(run("server", "--id", "n4", "--peers", PEERS)).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--id': member name 'n4' is not among the peers (n1, n2, n3)");

        // Without --id the member is n1, which must then be listed too.
        assertThat(run("server", "--peers", "n2=127.0.0.1:7171,n3=127.0.0.1:7271")).isEqualTo(2);
        assertThat(err.toString()).contains("'--id'").contains("'n1'");
    }

    @Test
    void twoMembersGivenOneAddressIsAUsageErrorNamingPeers() {
        assertThat(run("server", "--peers", "n1=127.0.0.1:7071,n2=127.0.0.1:7071")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--peers'").contains("'n1' and 'n2'").contains("127.0.0.1:7071");
    }

    @Test
    void aClientPortThatIsAPeerPortIsAUsageErrorNamingClientPort() {
        assertThat(run("server", "--peers", PEERS, "--client-port", "7171")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--client-port'").contains("'n2'");

        assertThat(run("server", "--peers", PEERS, "--client-port", "7071")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--client-port'").contains("7071");
    }

    @Test
    void aPeerPortDifferentFromThisMembersEntryIsAUsageError() {
        assertThat(run("server", "--peers", PEERS, "--peer-port", "9071")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--peer-port'").contains("9071")
                .contains("127.0.0.1:7071").contains("leave --peer-port out");
    }

    @Test
    void otherInvalidSettingsAreUsageErrorsNamingTheirOption() {
        assertThat(run("server", "--snapshot-every", "10")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--snapshot-every': snapshot threshold");

        assertThat(run("server", "--election-timeout", "10ms")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--election-timeout': election timeout");

        assertThat(run("server", "--election-timeout", "1")).isEqualTo(2);
        assertThat(err.toString()).contains("--election-timeout").contains("500ms, 10s");

        assertThat(run("server", "--cluster", "no spaces")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--cluster': cluster name");

        assertThat(run("server", "--log-level", "loud", "--data-dir", tmp.resolve("never").toString())).isEqualTo(2);
        assertThat(err.toString()).contains("--log-level must be error, warn, info, debug or trace, got 'loud'");
        assertThat(tmp.resolve("never")).doesNotExist();

        assertThat(run("server", "--snapshot-every", "many")).isEqualTo(2);
        assertThat(err.toString()).contains("--snapshot-every");
    }

    @Test
    void aRefusedConfigurationLeavesTheDataDirectoryUntouched() {
        Path dataDir = tmp.resolve("member-data");

        for (String[] bad : new String[][] {
                {"--peers", "n1=127.0.0.1"},
                {"--id", "n9", "--peers", PEERS},
                {"--peers", "n1=127.0.0.1:7071,n2=127.0.0.1:7071"},
                {"--peers", PEERS, "--client-port", "7171"},
                {"--peers", PEERS, "--peer-port", "7000"}}) {
            String[] args = new String[bad.length + 3];
            args[0] = "server";
            args[1] = "--data-dir";
            args[2] = dataDir.toString();
            System.arraycopy(bad, 0, args, 3, bad.length);
            assertThat(run(args)).as(String.join(" ", bad)).isEqualTo(2);
            assertThat(Files.exists(dataDir)).as(String.join(" ", bad)).isFalse();
            assertThat(out.toString()).isEmpty();
        }
    }

    @Test
    void theServingLineNamesTheClusterAndHowToAddAJoiningMember() {
        String single = ServerCommand.servingLine(ServerConfig.defaults(), 7070);
        assertThat(single).startsWith("tenure: member n1 serving clients on 127.0.0.1:7070");

        ServerConfig joining = config("--id", "n4", "--join", "--peers", PEERS + ",n4=127.0.0.1:7371", "--client-port", "7370");
        assertThat(ServerCommand.servingLine(joining, 7370))
                .contains("member n4 of cluster tenure serving clients on 127.0.0.1:7370")
                .contains("tenure member add n4 127.0.0.1:7371");
    }
}
