package io.tenure.dist;

import io.tenure.testing.Await;
import io.tenure.testing.FreePorts;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The release tarball as a user gets it: unpacked by {@code tar} into an empty directory, its
 * {@code bin/tenure} run with only a JRE on the {@code PATH} (no Maven, no {@code JAVA_HOME}): a
 * member started from it with the shipped {@code conf/tenure.conf} grants a lock taken through the
 * same launcher; the launcher's JVM choices match the repository's {@code ./tenure}; it refuses a
 * missing or old Java plainly; the systemd unit agrees with the config it runs.
 *
 * <p>The tests share the unpacked release and nothing else (own ports, own directories), and run
 * two at a time: the member that takes the lock beside the rest, most of them JVM starts.
 */
@Execution(ExecutionMode.CONCURRENT)
class ReleaseTarballIT {
    private static final Path TARBALL = Path.of(System.getProperty("tenure.dist.tarball"));
    private static final String VERSION = System.getProperty("tenure.dist.version");
    private static final Path CLI_LIB = Path.of(System.getProperty("tenure.dist.cliLib"));
    /** How long a member may take to serve, on a CI machine busy with other builds. */
    private static final Duration START_LIMIT = Duration.ofSeconds(60);
    private static final Duration COMMAND_LIMIT = Duration.ofSeconds(60);
    /** A setting at its default in conf/tenure.conf: '#key = value'. Prose comments have a blank after the '#'. */
    private static final Pattern DEFAULT_LINE = Pattern.compile("^#([a-z][a-z0-9-]*) = (.*)$", Pattern.MULTILINE);

    @TempDir
    static Path work;
    static UnpackedRelease release;

    @BeforeAll
    static void unpack() throws Exception {
        release = UnpackedRelease.unpack(TARBALL, "tenure-" + VERSION, work);
    }

    @Test
    void holdsOneDirectoryWithTheLauncherTheJarsTheConfigAndTheUnit() throws IOException {
        try (Stream<Path> top = Files.list(work.resolve("unpacked"))) {
            assertThat(top.map(p -> p.getFileName().toString())).as("everything under one directory").containsExactly("tenure-" + VERSION);
        }
        Path home = release.home();
        assertThat(names(home)).containsExactlyInAnyOrder("README.md", "bin", "conf", "lib", "systemd");
        assertThat(names(home.resolve("bin"))).containsExactly("tenure");
        assertThat(names(home.resolve("conf"))).containsExactly("tenure.conf");
        assertThat(names(home.resolve("systemd"))).containsExactly("tenure.service");

        assertThat(Files.isExecutable(release.launcher())).as("bin/tenure is executable").isTrue();
        assertThat(Files.getPosixFilePermissions(release.launcher())).contains(PosixFilePermission.OWNER_EXECUTE);
        assertThat(Files.readString(release.launcher())).startsWith("#!/usr/bin/env bash\n").doesNotContain("mvn");

        assertThat(Files.isDirectory(CLI_LIB)).as(CLI_LIB + " (tenure-cli's lib/, built in the same reactor)").isTrue();
        TreeSet<String> expected = new TreeSet<>(names(CLI_LIB));
        expected.add("tenure-cli.jar");
        assertThat(new TreeSet<>(names(home.resolve("lib")))).as("lib/: the CLI and the same dependencies as tenure-cli/target/lib")
                .isEqualTo(expected);
        try (Stream<Path> jars = Files.list(home.resolve("lib"))) {
            // A local repository of links (a shared cache) would otherwise ship links to the build host's files.
            assertThat(jars).as("lib/ holds the jars themselves").allMatch(jar -> Files.isRegularFile(jar, LinkOption.NOFOLLOW_LINKS));
        }

        String readme = Files.readString(home.resolve("README.md"));
        assertThat(readme).startsWith("# Tenure " + VERSION + "\n").doesNotContain("${");
    }

    @Test
    void aMemberStartedFromTheReleaseWithItsConfigGrantsALockTakenThroughALinkToTheLauncher() throws Exception {
        int[] ports = FreePorts.take(4);
        int clientPort = ports[0];
        int httpPort = ports[1];
        Path data = work.resolve("data");
        Path log = work.resolve("server.log");
        assertThat(release.run(List.of("sh", "-c", "command -v mvn || echo no-mvn; command -v java"), release.environment(), COMMAND_LIMIT)
                .output()).as("the PATH the release runs with").startsWith("no-mvn\n").contains(System.getProperty("java.home"));

        // The shipped config as it is; the flags (which win over it) move its ports and data directory.
        Process server = release.start(List.of(release.launcher().toString(), "server",
                "--config", release.home().resolve("conf/tenure.conf").toString(),
                "--data-dir", data.toString(), "--client-port", "" + clientPort, "--http-port", "" + httpPort,
                "--peer-port", "" + ports[2], "--text-port", "" + ports[3]), release.environment(), log);
        try {
            awaitReady(server, httpPort, log);
            // The launcher exec'd the JVM: the pid a service manager (or this test) signals is the member's.
            List<String> arguments = List.of(server.info().arguments().orElse(new String[0]));
            assertThat(server.info().command()).as("the process started is the JVM").hasValueSatisfying(c -> assertThat(c).endsWith("/java"));
            assertThat(arguments).as("a member's JVM options, as ./tenure gives them")
                    .contains("-XX:+UseZGC", "--add-opens=java.base/java.lang=ALL-UNNAMED", "io.tenure.cli.TenureCli", "server");
            assertThat(UnpackedRelease.read(log)).as("the data directory of the flag, not the file's")
                    .contains("data in " + data.toAbsolutePath().normalize());

            // Through a link to a link to the launcher, as from /usr/local/bin.
            Path links = Files.createDirectories(work.resolve("links"));
            Files.createSymbolicLink(links.resolve("tenure-link"), release.launcher());
            Path tenure = Files.createSymbolicLink(links.resolve("tenure"), Path.of("tenure-link"));
            // A TTL far beyond the stalls of a CI machine busy with other builds: this is about the release, not lease timing.
            UnpackedRelease.Run lock = release.run(List.of(tenure.toString(), "lock", "dist/smoke", "--endpoints", "127.0.0.1:" + clientPort,
                    "--ttl", "60s", "--", "sh", "-c", "echo token=$TENURE_FENCING_TOKEN"), release.environment(), COMMAND_LIMIT);
            assertThat(lock.exit()).as(lock.output()).isZero();
            Matcher token = Pattern.compile("(?m)^token=(\\d+)$").matcher(lock.output());
            assertThat(token.find()).as("the command saw its fencing token: " + lock.output()).isTrue();
            assertThat(Long.parseLong(token.group(1))).isPositive();

            server.destroy(); // SIGTERM to the member's JVM: a graceful stop
            assertThat(server.waitFor(30, TimeUnit.SECONDS)).as("the member stops within 30 s of SIGTERM").isTrue();
            assertThat(server.exitValue()).as("stopped on request: " + UnpackedRelease.read(log)).isZero();
        } finally {
            if (server.isAlive()) {
                server.destroyForcibly();
                server.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void everyDefaultTheConfigShowsIsAcceptedWhenUncommented() throws Exception {
        String shipped = Files.readString(release.home().resolve("conf/tenure.conf"));
        Matcher defaults = DEFAULT_LINE.matcher(shipped);
        List<String> keys = new ArrayList<>();
        while (defaults.find()) {
            keys.add(defaults.group(1));
        }
        assertThat(keys).as("the settings shown at their defaults").hasSizeGreaterThan(30).doesNotHaveDuplicates()
                .contains("client-port", "http-port", "peer-port", "text-port", "host", "id", "max-connections");
        assertThat(shipped).as("the data directory is set, where the unit may write").containsPattern("(?m)^data-dir = /var/lib/tenure$");

        Path all = work.resolve("all-defaults.conf");
        Files.writeString(all, DEFAULT_LINE.matcher(shipped).replaceAll("$1 = $2"));
        // --stop-when-serving: the member starts with every setting read from the file, serves, and stops (exit 0).
        UnpackedRelease.Run run = release.tenure(START_LIMIT, "server", "--config", all.toString(), "--data-dir", work.resolve("data-defaults").toString(),
                "--client-port", "0", "--http-port", "0", "--peer-port", "0", "--text-port", "0", "--stop-when-serving");
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).contains("event=serving").contains("data_dir=" + work.resolve("data-defaults"));
    }

    @Test
    void picksTheCollectorAndHeapAsTheRepositoryLauncherDoes() throws Exception {
        assertThat(flags(null, "server")).contains("-XX:+UseZGC", "-XX:InitialHeapSize=16777216 ");
        assertThat(flags("-Xms64m", "server")).as("an -Xms in TENURE_JAVA_OPTS wins")
                .contains("-XX:InitialHeapSize=67108864 ").doesNotContain("-XX:InitialHeapSize=16777216 ");
        assertThat(flags(null, "bench")).contains("-XX:+UseZGC", "-XX:MaxHeapSize=1073741824 ");
        assertThat(flags(null, "status")).as("a client command keeps the JVM's own choice").doesNotContain("-XX:+UseZGC");
        assertThat(flags("-XX:+UseSerialGC", "server")).as("a collector in TENURE_JAVA_OPTS wins")
                .contains("-XX:+UseSerialGC").doesNotContain("-XX:+UseZGC");
        assertThat(flags("-Xmx300m", "bench")).as("an -Xmx in TENURE_JAVA_OPTS wins")
                .contains("-XX:MaxHeapSize=314572800 ").doesNotContain("-XX:MaxHeapSize=1073741824 ");
    }

    /**
     * The JVM flags {@code bin/tenure ARGS} runs with, as the JVM prints them: -XX:+PrintCommandLineFlags,
     * and -version, after which the JVM exits without running the CLI.
     */
    private static String flags(String javaOpts, String... args) throws Exception {
        Map<String, String> environment = release.environment();
        environment.put("TENURE_JAVA_OPTS", "-XX:+PrintCommandLineFlags" + (javaOpts == null ? "" : " " + javaOpts) + " -version");
        UnpackedRelease.Run run = release.tenure(environment, COMMAND_LIMIT, args);
        assertThat(run.exit()).as(run.output()).isZero();
        return run.output().lines().filter(line -> line.startsWith("-XX:")).findFirst()
                .map(line -> line + " ").orElseThrow(() -> new AssertionError("no flags printed: " + run.output()));
    }

    @Test
    void refusesAMissingOrOldJavaSayingWhatItNeeds() throws Exception {
        Map<String, String> noJava = release.environment();
        noJava.put("PATH", release.tools().toString());
        UnpackedRelease.Run missing = release.tenure(noJava, COMMAND_LIMIT, "--version");
        assertThat(missing.exit()).isEqualTo(1);
        assertThat(missing.output()).contains("tenure: java not found");

        Map<String, String> badHome = release.environment();
        badHome.put("JAVA_HOME", work.resolve("no-such-jdk").toString());
        UnpackedRelease.Run notAProgram = release.tenure(badHome, COMMAND_LIMIT, "--version");
        assertThat(notAProgram.exit()).isEqualTo(1);
        assertThat(notAProgram.output()).contains("JAVA_HOME is " + work.resolve("no-such-jdk")).contains("is not a program");

        // A Java 11 known by its release file, and a Java 8 known only by what `java -version` prints.
        // Their java exits 99 if the launcher ever runs the CLI with it.
        Path java11 = fakeJava("jdk-11", "JAVA_VERSION=\"11.0.22\"\n", "exit 99");
        Path java8 = fakeJava("jre-8", null,
                "[ \"$1\" = -version ] && { echo 'java version \"1.8.0_392\"' >&2; echo 'Java(TM) SE Runtime Environment' >&2; exit 0; }; exit 99");
        for (Map.Entry<Path, String> old : Map.of(java11, "11.0.22", java8, "1.8.0_392").entrySet()) {
            Map<String, String> environment = release.environment();
            environment.put("JAVA_HOME", old.getKey().toString());
            UnpackedRelease.Run refused = release.tenure(environment, COMMAND_LIMIT, "server");
            assertThat(refused.exit()).as(refused.output()).isEqualTo(1);
            assertThat(refused.output()).contains("is Java " + old.getValue() + "; Tenure needs Java 17 or later");
        }
    }

    /** A fake Java installation: bin/java running {@code script}, and a release file when {@code release} is not null. */
    private static Path fakeJava(String name, String release, String script) throws IOException {
        Path home = Files.createDirectories(work.resolve(name).resolve("bin")).getParent();
        Path java = Files.writeString(home.resolve("bin/java"), "#!/bin/sh\n" + script + "\n");
        java.toFile().setExecutable(true);
        if (release != null) {
            Files.writeString(home.resolve("release"), release);
        }
        return home;
    }

    @Test
    void theSystemdUnitRunsTheLauncherWithTheConfigAndMayWriteItsDataDirectory() throws IOException {
        String unit = Files.readString(release.home().resolve("systemd/tenure.service"));
        String config = Files.readString(release.home().resolve("conf/tenure.conf"));
        Matcher dataDir = Pattern.compile("(?m)^data-dir = (.+)$").matcher(config);
        assertThat(dataDir.find()).isTrue();

        assertThat(unit).containsPattern("(?m)^ExecStart=/opt/tenure/bin/tenure server --config /etc/tenure/tenure.conf$")
                .containsPattern("(?m)^User=tenure$")
                .containsPattern("(?m)^Restart=on-failure$")
                .containsPattern("(?m)^NoNewPrivileges=true$")
                .containsPattern("(?m)^ProtectSystem=strict$")
                .containsPattern("(?m)^LimitNOFILE=\\d+$")
                .containsPattern("(?m)^ReadWritePaths=(.* )?" + Pattern.quote(dataDir.group(1)) + "( .*)?$");
        // The install notes place the files where the unit looks for them.
        assertThat(Files.readString(release.home().resolve("README.md")))
                .contains("ln -sfn /opt/tenure-" + VERSION + " /opt/tenure")
                .contains("conf/tenure.conf /etc/tenure/tenure.conf")
                .contains("systemd/tenure.service");
    }

    @Test
    void theSystemdUnitPassesSystemdsOwnCheck() throws Exception {
        Path analyze = release.tools().resolve("systemd-analyze");
        assumeThat(Files.isExecutable(analyze)).as("systemd-analyze is installed").isTrue();
        // The unit as installed, but pointing at this unpacked release (verify checks that ExecStart is a program).
        String unit = Files.readString(release.home().resolve("systemd/tenure.service"))
                .replace("/opt/tenure/", release.home() + "/");
        Path copy = Files.writeString(Files.createDirectories(work.resolve("units")).resolve("tenure.service"), unit);
        UnpackedRelease.Run verify = release.run(List.of(analyze.toString(), "verify", copy.toString()), release.environment(), COMMAND_LIMIT);
        assertThat(verify.exit()).as(verify.output()).isZero();
        assertThat(verify.output()).as("no unknown key or bad value").isEmpty();
    }

    private static void awaitReady(Process server, int httpPort, Path log) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        URI readyz = URI.create("http://127.0.0.1:" + httpPort + "/readyz");
        Await.PROCESSES.until(() -> "the member says it serves and answers /readyz with 200; its log:\n" + UnpackedRelease.read(log), START_LIMIT, () -> {
            if (!server.isAlive()) {
                throw new AssertionError("the member exited (" + server.exitValue() + "); its log:\n" + UnpackedRelease.read(log));
            }
            if (!UnpackedRelease.read(log).contains("serving clients on")) {
                return false;
            }
            try {
                return http.send(HttpRequest.newBuilder(readyz).timeout(Duration.ofSeconds(5)).build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
            } catch (IOException e) {
                return false;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        });
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }
}
