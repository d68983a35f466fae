package io.tenure.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.bench.BenchSettings;
import io.tenure.client.LockMode;
import io.tenure.server.RaftEngine;
import io.tenure.server.ServerConfig;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;

/** Argument parsing and validation: everything here is decided before any server is contacted. */
class CommandLineTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine commandLine = TenureCli.commandLine();
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        return commandLine.execute(args);
    }

    private static <T> T parsed(Class<T> type, String... args) {
        ParseResult result = TenureCli.commandLine().parseArgs(args);
        return type.cast(result.subcommand().commandSpec().userObject());
    }

    @Test
    void lockReadsNameOptionsAndTheCommandAfterTheDoubleDash() {
        LockCommand lock = parsed(LockCommand.class, "lock", "jobs", "--ttl", "5s", "--timeout", "0",
                "--client-id", "me", "--metadata", "batch 7", "--endpoints", "a:1,b:2", "--", "sh", "-c", "exit 3");

        assertThat(lock.name()).isEqualTo("jobs");
        assertThat(lock.ttl).isEqualTo(Duration.ofSeconds(5));
        assertThat(lock.timeout).isZero();
        assertThat(lock.clientId).isEqualTo("me");
        assertThat(lock.metadata).isEqualTo("batch 7");
        assertThat(lock.endpoints.endpoints).containsExactly("a:1", "b:2");
        assertThat(lock.command()).containsExactly("sh", "-c", "exit 3");
    }

    @Test
    void lockDefaults() {
        LockCommand lock = parsed(LockCommand.class, "lock", "jobs", "--", "true");

        assertThat(lock.ttl).isEqualTo(Duration.ofSeconds(10));
        assertThat(lock.timeout).isEqualTo(Duration.ofSeconds(30));
        assertThat(lock.endpoints.endpoints).containsExactly("127.0.0.1:7070");
        assertThat(lock.clientId).isNull();
        assertThat(LeaseBoundCommand.defaultClientId()).matches(".+@.+:" + ProcessHandle.current().pid());
    }

    @Test
    void lockTimeoutForeverWaitsWithoutLimit() {
        assertThat(parsed(LockCommand.class, "lock", "jobs", "--timeout", "forever", "--", "true").timeout).isNull();
    }

    @Test
    void aZeroTtlIsAUsageErrorNamingTtl() {
        assertThat(run("lock", "jobs", "--ttl", "0s", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--ttl").contains("more than 0");
    }

    @Test
    void aNegativeOrMalformedTtlIsAUsageErrorNamingTtl() {
        assertThat(run("lock", "jobs", "--ttl=-5s", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--ttl").contains("negative");

        err.getBuffer().setLength(0);
        assertThat(run("lock", "jobs", "--ttl", "10", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--ttl").contains("500ms, 10s, 2m");
    }

    @Test
    void lockWithoutACommandIsAUsageError() {
        assertThat(run("lock", "jobs")).isEqualTo(2);
        assertThat(err.toString()).contains("COMMAND");
    }

    @Test
    void lockHoldsInWriteModeUnlessToldToRead() {
        assertThat(parsed(LockCommand.class, "lock", "jobs", "--", "true").mode.lockMode()).isEqualTo(LockMode.WRITE);
        assertThat(parsed(LockCommand.class, "lock", "jobs", "--write", "--", "true").mode.lockMode()).isEqualTo(LockMode.WRITE);
        LockCommand reader = parsed(LockCommand.class, "lock", "jobs", "--read", "--timeout", "0", "--", "sh", "-c", "exit 3");
        assertThat(reader.mode.lockMode()).isEqualTo(LockMode.READ);
        assertThat(reader.timeout).isZero();
        assertThat(reader.command()).as("--read takes no value").containsExactly("sh", "-c", "exit 3");
        assertThat(parsed(LockCommand.class, "lock", "--read", "jobs", "--", "--write").command())
                .as("after the double dash, --write is COMMAND's").containsExactly("--write");
    }

    @Test
    void readAndWriteTogetherIsAUsageErrorNamingBoth() {
        assertThat(run("lock", "jobs", "--read", "--write", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--read", "--write", "mutually exclusive");

        err.getBuffer().setLength(0);
        assertThat(run("semaphore", "pool", "--limit", "2", "--read", "--", "true")).as("a semaphore has no modes").isEqualTo(2);
        assertThat(err.toString()).contains("--read");
    }

    @Test
    void barrierReadsNamePartiesAndItsTimeoutAndRefusesBadParties() {
        BarrierCommand barrier = parsed(BarrierCommand.class, "barrier", "gate", "--parties", "4", "--timeout", "forever",
                "--client-id", "me");
        assertThat(barrier.name).isEqualTo("gate");
        assertThat(barrier.parties).isEqualTo(4);
        assertThat(barrier.timeout).as("forever").isNull();
        assertThat(run("barrier", "gate")).as("--parties is required").isEqualTo(2);
        assertThat(run("barrier", "gate", "--parties", "0")).isEqualTo(2);
    }

    @Test
    void barrierDoubleReadsTheCommandAfterTheDoubleDashAndRefusesAMissingCommandOrFlag() {
        BarrierCommand barrier = parsed(BarrierCommand.class, "barrier", "round", "--parties", "200000", "--double", "--timeout", "5s",
                "--ttl", "3s", "--client-id", "me", "--", "sh", "-c", "exit 3");
        assertThat(barrier.doubleBarrier).isTrue();
        assertThat(barrier.parties).as("above a barrier's most, within a double barrier's").isEqualTo(200_000);
        assertThat(barrier.timeout).isEqualTo(Duration.ofSeconds(5));
        assertThat(barrier.ttl).isEqualTo(Duration.ofSeconds(3));
        assertThat(barrier.command).containsExactly("sh", "-c", "exit 3");
        assertThat(parsed(BarrierCommand.class, "barrier", "gate", "--parties", "2").doubleBarrier).isFalse();
        assertThat(run("barrier", "round", "--parties", "3", "--double")).as("--double needs COMMAND").isEqualTo(2);
        assertThat(run("barrier", "round", "--parties", "3", "--", "true")).as("COMMAND needs --double").isEqualTo(2);
        assertThat(run("barrier", "round", "--parties", "1000001", "--double", "--", "true")).isEqualTo(2);
        assertThat(run("barrier", "round", "--parties", "0", "--double", "--", "true")).isEqualTo(2);
    }

    @Test
    void latchReadsNameAndExactlyOneOfCountCountDownAndAwait() {
        LatchCommand set = parsed(LatchCommand.class, "latch", "done", "--count", "3");
        assertThat(set.name).isEqualTo("done");
        assertThat(set.count).isEqualTo(3);
        LatchCommand down = parsed(LatchCommand.class, "latch", "done", "--count-down");
        assertThat(down.countDown).isTrue();
        assertThat(down.count).isNull();
        LatchCommand await = parsed(LatchCommand.class, "latch", "done", "--await", "--timeout", "forever", "--client-id", "me");
        assertThat(await.await).isTrue();
        assertThat(await.timeout).as("forever").isNull();
        assertThat(parsed(LatchCommand.class, "latch", "done", "--await").timeout).isEqualTo(java.time.Duration.ofSeconds(30));
        assertThat(run("latch", "done")).as("one of the three is required").isEqualTo(2);
        assertThat(err.toString()).contains("exactly one of --count N, --count-down and --await");
        assertThat(run("latch", "done", "--count", "2", "--await")).isEqualTo(2);
        assertThat(run("latch", "done", "--count", "0")).isEqualTo(2);
        assertThat(run("latch", "done", "--count", "1000001")).isEqualTo(2);
        assertThat(run("latch", "done", "--count", "x")).isEqualTo(2);
    }

    @Test
    void semaphoreReadsNameLimitPermitsTheLockOptionsAndTheCommandAfterTheDoubleDash() {
        SemaphoreCommand semaphore = parsed(SemaphoreCommand.class, "semaphore", "pool", "--limit", "8", "--permits", "3",
                "--ttl", "5s", "--timeout", "0", "--client-id", "me", "--endpoints", "a:1,b:2", "--request-timeout", "2s",
                "--", "sh", "-c", "exit 3");

        assertThat(semaphore.name).isEqualTo("pool");
        assertThat(semaphore.limit).isEqualTo(8);
        assertThat(semaphore.permits).isEqualTo(3);
        assertThat(semaphore.ttl).isEqualTo(Duration.ofSeconds(5));
        assertThat(semaphore.timeout).isZero();
        assertThat(semaphore.clientId).isEqualTo("me");
        assertThat(semaphore.endpoints.endpoints).containsExactly("a:1", "b:2");
        assertThat(semaphore.endpoints.requestTimeout).isEqualTo(Duration.ofSeconds(2));
        assertThat(semaphore.command).containsExactly("sh", "-c", "exit 3");
    }

    @Test
    void semaphoreDefaultsAreOnePermitAndTheLockDefaults() {
        SemaphoreCommand semaphore = parsed(SemaphoreCommand.class, "semaphore", "pool", "--limit", "2", "--", "true");

        assertThat(semaphore.permits).isEqualTo(1);
        assertThat(semaphore.ttl).isEqualTo(Duration.ofSeconds(10));
        assertThat(semaphore.timeout).isEqualTo(Duration.ofSeconds(30));
        assertThat(semaphore.endpoints.endpoints).containsExactly("127.0.0.1:7070");
        assertThat(semaphore.clientId).isNull();
        assertThat(parsed(SemaphoreCommand.class, "semaphore", "pool", "--limit", "2", "--timeout", "forever", "--", "true")
                .timeout).isNull();
    }

    @Test
    void aSemaphoreLimitOutOfRangeOrMissingIsAUsageErrorNamingLimit() {
        assertThat(run("semaphore", "pool", "--limit", "0", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--limit'").contains("between 1 and 1000000, got 0");

        err.getBuffer().setLength(0);
        assertThat(run("semaphore", "pool", "--limit", "1000001", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--limit'").contains("got 1000001");

        err.getBuffer().setLength(0);
        assertThat(run("semaphore", "pool", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--limit");

        err.getBuffer().setLength(0);
        assertThat(run("semaphore", "pool", "--limit", "many", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--limit").contains("many");
    }

    @Test
    void permitsOutsideOneToTheLimitAreAUsageErrorNamingPermits() {
        assertThat(run("semaphore", "pool", "--limit", "2", "--permits", "3", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--permits'").contains("between 1 and --limit (2), got 3");

        err.getBuffer().setLength(0);
        assertThat(run("semaphore", "pool", "--limit", "2", "--permits", "0", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--permits'").contains("got 0");
    }

    @Test
    void semaphoreRefusesWhatLockRefuses() {
        assertThat(run("semaphore", "pool", "--limit", "2")).as("without a command").isEqualTo(2);
        assertThat(err.toString()).contains("COMMAND");

        err.getBuffer().setLength(0);
        assertThat(run("semaphore", "pool", "--limit", "2", "--ttl", "0s", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--ttl").contains("more than 0");

        err.getBuffer().setLength(0);
        assertThat(run("semaphore", "pool", "--limit", "2", "--metadata", "x", "--", "true")).as("no metadata on permits")
                .isEqualTo(2);
        assertThat(err.toString()).contains("--metadata");
    }

    @Test
    void electReadsNameValueTheLockOptionsAndTheCommandAfterTheDoubleDash() {
        ElectCommand elect = parsed(ElectCommand.class, "elect", "scheduler", "--value", "n1:9000", "--ttl", "5s",
                "--timeout", "0", "--client-id", "me", "--endpoints", "a:1,b:2", "--", "sh", "-c", "exit 3");

        assertThat(elect.name).isEqualTo("scheduler");
        assertThat(elect.value).isEqualTo("n1:9000");
        assertThat(elect.ttl).isEqualTo(Duration.ofSeconds(5));
        assertThat(elect.timeout).isZero();
        assertThat(elect.clientId).isEqualTo("me");
        assertThat(elect.endpoints.endpoints).containsExactly("a:1", "b:2");
        assertThat(elect.command).containsExactly("sh", "-c", "exit 3");

        ElectCommand defaults = parsed(ElectCommand.class, "elect", "scheduler", "--value", "", "--", "true");
        assertThat(defaults.value).as("an empty value is a value").isEmpty();
        assertThat(defaults.ttl).isEqualTo(Duration.ofSeconds(10));
        assertThat(defaults.timeout).isEqualTo(Duration.ofSeconds(30));
        assertThat(defaults.clientId).isNull();
        assertThat(parsed(ElectCommand.class, "elect", "scheduler", "--value", "v", "--timeout", "forever", "--", "true").timeout)
                .isNull();
    }

    @Test
    void electWithoutAValueOrACommandOrWithATooLongValueIsAUsageError() {
        assertThat(run("elect", "scheduler", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--value");

        err.getBuffer().setLength(0);
        assertThat(run("elect", "scheduler", "--value", "v")).isEqualTo(2);
        assertThat(err.toString()).contains("COMMAND");

        err.getBuffer().setLength(0);
        assertThat(run("elect", "scheduler", "--value", "é".repeat(32 * 1024 + 1), "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--value'").contains("65536 bytes", "got 65538");

        err.getBuffer().setLength(0);
        assertThat(run("elect", "scheduler", "--value", "v", "--ttl", "0s", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--ttl").contains("more than 0");

        for (String other : List.of("--metadata=x", "--read", "--limit=2", "--permits=1")) {
            err.getBuffer().setLength(0);
            assertThat(run("elect", "scheduler", "--value", "v", other, "--", "true")).as(other).isEqualTo(2);
            assertThat(err.toString()).contains(other.split("=")[0]);
        }
    }

    @Test
    void leaderReadsNameAndWatch() {
        LeaderCommand once = parsed(LeaderCommand.class, "leader", "scheduler", "--endpoints", "a:1");
        assertThat(once.name).isEqualTo("scheduler");
        assertThat(once.watch).isFalse();
        assertThat(once.endpoints.endpoints).containsExactly("a:1");
        assertThat(parsed(LeaderCommand.class, "leader", "--watch", "scheduler").watch).isTrue();

        assertThat(run("leader")).isEqualTo(2);
        assertThat(err.toString()).contains("NAME");
        err.getBuffer().setLength(0);
        assertThat(run("leader", "scheduler", "--value", "v")).isEqualTo(2);
        assertThat(err.toString()).contains("--value");
    }

    @Test
    void aMalformedEndpointIsAUsageErrorNamingEndpoints() {
        assertThat(run("status", "--endpoints", "nonsense")).isEqualTo(2);
        assertThat(err.toString()).contains("--endpoints").contains("nonsense");
    }

    @Test
    void aServerBeyondLoopbackWithoutTlsAndClientCertificatesRefusesToStartNamingTheFlags() {
        ServerCommand open = parsed(ServerCommand.class, "server", "--host", "0.0.0.0");
        assertThatThrownBy(open::config).isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("0.0.0.0").hasMessageContaining("--cert-file").hasMessageContaining("--key-file")
                .hasMessageContaining("--trusted-ca-file").hasMessageContaining("--client-cert-auth").hasMessageContaining("--insecure");

        ServerCommand peersOpen = parsed(ServerCommand.class, "server", "--member", "n1", "--peers",
                "n1=127.0.0.1:7071,n2=10.1.2.3:7071,n3=10.1.2.4:7071");
        assertThatThrownBy(peersOpen::config).isInstanceOf(CommandLine.ParameterException.class)
                .hasMessageContaining("10.1.2.3:7071").hasMessageContaining("--peer-cert-file").hasMessageContaining("--insecure");

        // On loopback, the default, nothing is needed.
        assertThat(parsed(ServerCommand.class, "server", "--host", "127.0.0.1").config().insecure()).isFalse();
        assertThat(parsed(ServerCommand.class, "server", "--host", "localhost").config().exposure()).isNull();
    }

    @Test
    void auditFlagsSetTheTrailAndBadOnesNameTheirFlag() {
        var audit = parsed(ServerCommand.class, "server", "--audit-file", "/var/log/tenure/audit.jsonl", "--audit-max-size", "8MiB",
                "--audit-files", "3").config().auditTrail();
        assertThat(audit.file()).isEqualTo(Path.of("/var/log/tenure/audit.jsonl"));
        assertThat(audit.maxBytes()).isEqualTo(8L << 20);
        assertThat(audit.files()).isEqualTo(3);
        assertThat(parsed(ServerCommand.class, "server").config().auditTrail().file()).as("off by default").isNull();
        assertThatThrownBy(() -> parsed(ServerCommand.class, "server", "--audit-files", "0").config())
                .isInstanceOf(CommandLine.ParameterException.class).hasMessageContaining("--audit-files");
        assertThatThrownBy(() -> parsed(ServerCommand.class, "server", "--audit-max-size", "1KiB").config())
                .isInstanceOf(CommandLine.ParameterException.class).hasMessageContaining("--audit-max-size");
    }

    @Test
    void tlsFlagsGoTogether() {
        assertThatThrownBy(() -> parsed(ServerCommand.class, "server", "--cert-file", "/nonexistent.pem").config())
                .isInstanceOf(CommandLine.ParameterException.class).hasMessageContaining("missing: --key-file");
        assertThatThrownBy(() -> parsed(ServerCommand.class, "server", "--tls-key", "/nonexistent.key").config())
                .isInstanceOf(CommandLine.ParameterException.class).hasMessageContaining("missing: --cert-file");
        assertThatThrownBy(() -> parsed(ServerCommand.class, "server", "--client-cert-auth").config())
                .isInstanceOf(CommandLine.ParameterException.class).hasMessageContaining("--client-cert-auth needs TLS");
        assertThatThrownBy(() -> parsed(ServerCommand.class, "server", "--cert-file", "/nonexistent.pem", "--key-file",
                "/nonexistent.key").config())
                .isInstanceOf(CommandLine.ParameterException.class).hasMessageContaining("--cert-file").hasMessageContaining("does not exist");
        assertThat(run("status", "--cert", "/c.pem")).isEqualTo(2);
        assertThat(err.toString()).contains("--cert and --key together").contains("--key");
    }

    @Test
    void serverOptionsOverrideTheDefaults() {
        ServerCommand server = parsed(ServerCommand.class, "server", "--data-dir", "/tmp/t1", "--client-port", "0",
                "--peer-port", "9071", "--host", "0.0.0.0", "--member", "n2", "--insecure");

        var config = server.config();
        assertThat(config.dataDir()).isEqualTo(Path.of("/tmp/t1"));
        assertThat(config.clientPort()).isZero();
        assertThat(config.peerPort()).isEqualTo(9071);
        assertThat(config.host()).isEqualTo("0.0.0.0");
        assertThat(config.insecure()).isTrue();
        assertThat(config.memberName()).isEqualTo("n2");
        assertThat(parsed(ServerCommand.class, "server").config()).isEqualTo(io.tenure.server.ServerConfig.defaults());
    }

    @Test
    void invalidServerSettingsAreUsageErrorsNamingTheOption() {
        assertThat(run("server", "--client-port", "70000")).isEqualTo(2);
        assertThat(err.toString()).contains("--client-port");

        err.getBuffer().setLength(0);
        assertThat(run("server", "--member", "bad name!")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--id'").contains("bad name!");

        err.getBuffer().setLength(0);
        assertThat(run("server", "--client-port", "7075", "--peer-port", "7075")).isEqualTo(2);
        assertThat(err.toString()).contains("must differ");

        err.getBuffer().setLength(0);
        assertThat(run("server", "--client-port", "many")).isEqualTo(2);
        assertThat(err.toString()).contains("--client-port");
    }

    @Test
    void unknownOptionsAndMissingSubcommandsAreUsageErrors() {
        assertThat(run("lock", "jobs", "--tll", "5s", "--", "true")).isEqualTo(2);
        assertThat(err.toString()).contains("--tll");
        assertThat(run()).isEqualTo(2);
        assertThat(run("frobnicate")).isEqualTo(2);
    }

    @Test
    void helpListsTheSubcommandsAndTheExitCodes() {
        assertThat(run("--help")).isZero();
        assertThat(out.toString()).contains("server", "lock", "semaphore", "elect", "leader", "status", "member", "locks", "describe",
                "lease", "watch", "snapshot", "Exit codes")
                .contains("5", "tenure leader: nobody leads");

        out.getBuffer().setLength(0);
        assertThat(run("lock", "--help")).isZero();
        assertThat(out.toString())
                .contains("TENURE_FENCING_TOKEN", "--ttl", "--timeout", "--endpoints", "--client-id", "--metadata")
                .contains("[--read | --write]", "TENURE_LOCK_MODE")
                .contains("3", "the lease was lost")
                .contains("4", "the lock was not acquired within --timeout");
        assertThat(out.toString().replaceAll("\\s+", " ")).as("as before tenure elect").contains("wait for the lock", "loses the lock");

        out.getBuffer().setLength(0);
        assertThat(run("semaphore", "--help")).isZero();
        assertThat(out.toString())
                .contains("TENURE_LOCK_KEY", "TENURE_LEASE_ID", "TENURE_FENCING_TOKEN", "TENURE_PERMITS")
                .contains("--limit", "--permits", "--ttl", "--timeout", "--endpoints", "--client-id")
                .contains("wait for the semaphore")
                .contains("3", "the lease was lost")
                .contains("4", "the semaphore was not acquired within --timeout")
                .doesNotContain("--metadata", "--read", "TENURE_LOCK_MODE");

        out.getBuffer().setLength(0);
        assertThat(run("elect", "--help")).isZero();
        assertThat(out.toString())
                .contains("TENURE_LOCK_KEY", "TENURE_LEASE_ID", "TENURE_FENCING_TOKEN", "tenure leader")
                .contains("--value", "--ttl", "--timeout", "--endpoints", "--client-id")
                .contains("3", "the lease was lost")
                .contains("4", "not elected within --timeout")
                .doesNotContain("--metadata", "--read", "--limit", "${");
        assertThat(out.toString().replaceAll("\\s+", " ")).as("its own words for what it waits for")
                .contains("wait for leadership", "loses leadership", "hand leadership to the next candidate")
                .doesNotContain("the elect ", "the elect:");

        out.getBuffer().setLength(0);
        assertThat(run("leader", "--help")).isZero();
        assertThat(out.toString())
                .contains("value", "client_id", "lease", "fencing_token", "--watch")
                .contains("leader: client_id=ID lease=L fencing_token=T revision=R value=V", "leader: none")
                .contains("5", "nobody leads NAME");
    }

    @Test
    void versionPrintsTheToolName() {
        assertThat(run("--version")).isZero();
        assertThat(out.toString()).startsWith("tenure ");
    }

    @Test
    void anUnreachableClusterIsAnErrorNotAUsageError() {
        // Port 1 on loopback refuses connections at once.
        assertThat(run("status", "--endpoints", "127.0.0.1:1", "--request-timeout", "300ms")).isEqualTo(1);
        // Refused at once, unless this machine is too busy to see the refusal within the 300 ms;
        // either way the cluster was unreachable, which is exit 1 and names the endpoint.
        assertThat(err.toString()).contains("127.0.0.1:1").containsAnyOf("unavailable", "did not answer in time");
    }

    @Test
    void subcommandsAreRegistered() {
        assertThat(TenureCli.commandLine().getSubcommands().keySet())
                .containsExactlyInAnyOrder("server", "lock", "semaphore", "elect", "leader", "barrier", "latch", "counter", "list", "kv", "signal", "listen", "status", "member", "locks",
                        "describe", "lease", "watch", "snapshot", "bench", "auth", "user", "role");
        assertThat(TenureCli.commandLine().getSubcommands().get("auth").getSubcommands().keySet())
                .containsExactlyInAnyOrder("enable", "disable", "status", "token");
        assertThat(TenureCli.commandLine().getSubcommands().get("user").getSubcommands().keySet())
                .containsExactlyInAnyOrder("add", "delete", "passwd", "list", "grant-role", "revoke-role");
        assertThat(TenureCli.commandLine().getSubcommands().get("role").getSubcommands().keySet())
                .containsExactlyInAnyOrder("add", "delete", "grant", "revoke", "list");
        assertThat(TenureCli.commandLine().getSubcommands().get("counter").getSubcommands().keySet())
                .containsExactlyInAnyOrder("incr", "decr", "get", "set", "cas");
        assertThat(TenureCli.commandLine().getSubcommands().get("list").getSubcommands().keySet())
                .containsExactlyInAnyOrder("push", "pop", "len");
        assertThat(TenureCli.commandLine().getSubcommands().get("kv").getSubcommands().keySet())
                .containsExactlyInAnyOrder("put", "get", "del", "list");
        assertThat(TenureCli.commandLine().getSubcommands().get("member").getSubcommands().keySet())
                .containsExactlyInAnyOrder("list", "add", "remove");
        assertThat(TenureCli.commandLine().getSubcommands().get("lease").getSubcommands().keySet())
                .containsExactlyInAnyOrder("grant", "revoke", "ttl", "list");
        assertThat(TenureCli.commandLine().getSubcommands().get("snapshot").getSubcommands().keySet())
                .containsExactlyInAnyOrder("save", "restore");
    }

    @Test
    void locksDescribeAndWatchReadTheirArguments() {
        LocksCommand locks = parsed(LocksCommand.class, "locks", "--prefix", "jobs/", "--limit", "50", "--endpoints", "a:1");
        assertThat(locks.prefix).isEqualTo("jobs/");
        assertThat(locks.limit).isEqualTo(50);
        assertThat(locks.endpoints.endpoints).containsExactly("a:1");
        LocksCommand all = parsed(LocksCommand.class, "locks");
        assertThat(all.prefix).isEmpty();
        assertThat(all.limit).isEqualTo(1000);

        assertThat(parsed(DescribeCommand.class, "describe", "jobs/a").name).isEqualTo("jobs/a");

        WatchCommand watch = parsed(WatchCommand.class, "watch", "jobs/", "--prefix", "--rev", "42");
        assertThat(watch.key).isEqualTo("jobs/");
        assertThat(watch.prefix).isTrue();
        assertThat(watch.startRevision).isEqualTo(42);
        WatchCommand fromNow = parsed(WatchCommand.class, "watch", "jobs/a");
        assertThat(fromNow.prefix).isFalse();
        assertThat(fromNow.startRevision).isZero();
    }

    @Test
    void leaseSubcommandsReadTheirArguments() {
        LeaseCommand.Grant grant = parsedSub(LeaseCommand.Grant.class, "lease", "grant", "--ttl", "1m", "--client-id", "me");
        assertThat(grant.ttl).isEqualTo(Duration.ofMinutes(1));
        assertThat(grant.clientId).isEqualTo("me");
        assertThat(parsedSub(LeaseCommand.Revoke.class, "lease", "revoke", "12345").id).isEqualTo(12345);
        assertThat(parsedSub(LeaseCommand.TimeToLive.class, "lease", "ttl", "-7").id).isEqualTo(-7);

        assertThat(run("lease", "grant")).isEqualTo(2);
        assertThat(err.toString()).contains("--ttl");
        assertThat(run("lease", "revoke")).isEqualTo(2);
        assertThat(run("lease", "ttl", "abc")).isEqualTo(2);
        assertThat(run("lease")).isEqualTo(2);
    }

    @Test
    void benchW6Defaults64ClientsOnASemaphoreOfLimit8() {
        List<String> jvm = List.of("-Xmx1g");
        BenchSettings w6 = parsed(BenchCommand.class, "bench", "--workload", "W6").settings(jvm);
        assertThat(w6.workload()).isEqualTo("W6");
        assertThat(w6.clients()).isEqualTo(64);
        assertThat(w6.limit()).isEqualTo(8);
        assertThat(w6.jvmOptions()).isEqualTo(jvm);

        BenchSettings told = parsed(BenchCommand.class, "bench", "--workload", "w6", "--clients", "16",
                "--limit", "4", "--target", "tenure-3").settings(jvm);
        assertThat(told.clients()).isEqualTo(16);
        assertThat(told.limit()).isEqualTo(4);
        assertThat(told.target()).isEqualTo("tenure-3");

        assertThat(parsed(BenchCommand.class, "bench", "--workload", "W2").settings(jvm).clients()).isEqualTo(16);
    }

    @Test
    void benchW7Defaults64Clients() {
        List<String> jvm = List.of("-Xmx1g");
        BenchSettings w7 = parsed(BenchCommand.class, "bench", "--workload", "w7").settings(jvm);
        assertThat(w7.workload()).isEqualTo("W7");
        assertThat(w7.clients()).isEqualTo(64);
        assertThat(parsed(BenchCommand.class, "bench", "--workload", "W7", "--clients", "8").settings(jvm).clients())
                .isEqualTo(8);
    }

    @Test
    void snapshotSubcommandsReadTheirArguments() {
        SnapshotCommand.Save save = parsedSub(SnapshotCommand.Save.class, "snapshot", "save", "b.snap", "--endpoints", "a:1,b:2",
                "--timeout", "1m");
        assertThat(save.file).isEqualTo(Path.of("b.snap"));
        assertThat(save.endpoints.endpoints).containsExactly("a:1", "b:2");
        assertThat(save.timeout).isEqualTo(Duration.ofMinutes(1));

        SnapshotCommand.Restore restore = parsedSub(SnapshotCommand.Restore.class, "snapshot", "restore", "b.snap",
                "--data-dir", "/tmp/d", "--id", "n2", "--cluster", "dr");
        assertThat(restore.file).isEqualTo(Path.of("b.snap"));
        assertThat(restore.dataDir).isEqualTo(Path.of("/tmp/d"));
        assertThat(restore.member).isEqualTo("n2");
        assertThat(restore.cluster).isEqualTo("dr");
        SnapshotCommand.Restore defaults = parsedSub(SnapshotCommand.Restore.class, "snapshot", "restore", "b.snap", "--data-dir", "d");
        assertThat(defaults.member).isEqualTo("n1");
        assertThat(defaults.cluster).isEqualTo("tenure");
        assertThat(defaults.engine()).as("jraft, a new cluster's engine").isEqualTo(RaftEngine.JRAFT);
        assertThat(parsedSub(SnapshotCommand.Restore.class, "snapshot", "restore", "b.snap", "--data-dir", "d",
                "--raft-engine", "auto").engine()).isEqualTo(RaftEngine.JRAFT);
        assertThat(parsedSub(SnapshotCommand.Restore.class, "snapshot", "restore", "b.snap", "--data-dir", "d",
                "--raft-engine", "jraft").engine()).isEqualTo(RaftEngine.JRAFT);
        assertThat(parsedSub(SnapshotCommand.Restore.class, "snapshot", "restore", "b.snap", "--data-dir", "d",
                "--raft-engine", "RATIS").engine()).isEqualTo(RaftEngine.RATIS);
        assertThat(run("snapshot", "restore", "b.snap", "--data-dir", "d", "--raft-engine", "raft")).isEqualTo(2);
        assertThat(err.toString()).contains("Invalid value for option '--raft-engine'").contains("'raft'");

        assertThat(run("snapshot", "save")).isEqualTo(2);
        assertThat(err.toString()).contains("FILE");
        assertThat(run("snapshot", "save", "b.snap", "--timeout", "0")).isEqualTo(2);
        assertThat(err.toString()).contains("--timeout");
    }

    private static <T> T parsedSub(Class<T> type, String... args) {
        ParseResult result = TenureCli.commandLine().parseArgs(args);
        return type.cast(result.subcommand().subcommand().commandSpec().userObject());
    }
}
