package io.tenure.dist;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The release tarball unpacked by {@code tar} into a directory of its own, and the commands of its
 * {@code bin/tenure} run as child processes the way a user on a host without a build would run them:
 * with a {@code PATH} that has a {@code java} and no {@code mvn}, and no {@code JAVA_HOME} or
 * {@code TENURE_*} variable inherited from the build.
 */
final class UnpackedRelease {
    /** What a command that ran to its end left: its exit status and its output (stdout and stderr). */
    record Run(int exit, String output) {}

    private final Path home;
    private final Path work;
    private final Path tools;

    private UnpackedRelease(Path home, Path work, Path tools) {
        this.home = home;
        this.work = work;
        this.tools = tools;
    }

    /**
     * Unpacks {@code tarball} under {@code work}/unpacked with {@code tar}, expecting one directory,
     * {@code directoryName}, in it.
     */
    static UnpackedRelease unpack(Path tarball, String directoryName, Path work) throws IOException, InterruptedException {
        if (!Files.isRegularFile(tarball)) {
            throw new IllegalStateException(tarball + " is missing: the module's package phase builds it");
        }
        Path into = Files.createDirectories(work.resolve("unpacked"));
        Path log = work.resolve("tar.log");
        Process tar = new ProcessBuilder("tar", "-xzf", tarball.toString(), "-C", into.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!tar.waitFor(2, TimeUnit.MINUTES)) {
            tar.destroyForcibly();
            throw new IllegalStateException("tar did not unpack " + tarball + " within 2 minutes");
        }
        if (tar.exitValue() != 0) {
            throw new IllegalStateException("tar failed (" + tar.exitValue() + "): " + Files.readString(log));
        }
        return new UnpackedRelease(into.resolve(directoryName), work, toolsWithout(work.resolve("tools"), "java", "mvn"));
    }

    /**
     * A directory of links to every program on this JVM's {@code PATH} except those whose name
     * starts with one of {@code prefixes} (the first of each name, as the shell would find it): the
     * system's tools (bash, tar, sed, ...) without Maven, and without a {@code java}.
     */
    private static Path toolsWithout(Path dir, String... prefixes) throws IOException {
        Files.createDirectories(dir);
        for (String entry : System.getenv().getOrDefault("PATH", "/usr/bin:/bin").split(":")) {
            Path pathDir = Path.of(entry.isEmpty() ? "." : entry);
            if (!Files.isDirectory(pathDir)) {
                continue;
            }
            try (DirectoryStream<Path> programs = Files.newDirectoryStream(pathDir)) {
                for (Path program : programs) {
                    String name = program.getFileName().toString();
                    Path link = dir.resolve(name);
                    if (startsWithAny(name, prefixes) || Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                            || !Files.isRegularFile(program) || !Files.isExecutable(program)) {
                        continue;
                    }
                    Files.createSymbolicLink(link, program.toAbsolutePath());
                }
            }
        }
        return dir;
    }

    private static boolean startsWithAny(String name, String... prefixes) {
        for (String prefix : prefixes) {
            if (name.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** The unpacked {@code tenure-VERSION} directory. */
    Path home() {
        return home;
    }

    /** The release's launcher, {@code bin/tenure}. */
    Path launcher() {
        return home.resolve("bin").resolve("tenure");
    }

    /** The system's programs without {@code java} and {@code mvn}. */
    Path tools() {
        return tools;
    }

    /**
     * The environment of a command: this JVM's, without {@code JAVA_HOME}, {@code TENURE_*} and
     * {@code MAVEN_*}, with a {@code PATH} of this JVM's {@code bin/} (its {@code java}) and the tools.
     */
    Map<String, String> environment() {
        Map<String, String> environment = new HashMap<>(System.getenv());
        environment.keySet().removeIf(name -> name.equals("JAVA_HOME") || name.startsWith("TENURE_") || name.startsWith("MAVEN_"));
        environment.put("PATH", Path.of(System.getProperty("java.home"), "bin") + ":" + tools);
        return environment;
    }

    /** Starts {@code command} in the work directory with {@code environment}, its output going to {@code log}. */
    Process start(List<String> command, Map<String, String> environment, Path log) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command).directory(work.toFile())
                .redirectErrorStream(true).redirectOutput(log.toFile());
        builder.environment().clear();
        builder.environment().putAll(environment);
        return builder.start();
    }

    /** Runs {@code bin/tenure ARGS} with {@link #environment()} until it exits. */
    Run tenure(Duration limit, String... args) throws IOException, InterruptedException {
        return tenure(environment(), limit, args);
    }

    /** Runs {@code bin/tenure ARGS} with {@code environment} until it exits, {@code limit} at most. */
    Run tenure(Map<String, String> environment, Duration limit, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(launcher().toString());
        command.addAll(List.of(args));
        return run(command, environment, limit);
    }

    /** Runs {@code command} until it exits; fails, after killing it, when it outlives {@code limit}. */
    Run run(List<String> command, Map<String, String> environment, Duration limit) throws IOException, InterruptedException {
        Path log = Files.createTempFile(work, "run-", ".log");
        Process process = start(command, environment, log);
        if (!process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            throw new AssertionError(command + " did not exit within " + limit + "; its output:\n" + read(log));
        }
        return new Run(process.exitValue(), read(log));
    }

    static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
