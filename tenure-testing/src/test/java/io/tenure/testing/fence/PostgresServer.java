package io.tenure.testing.fence;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;

/**
 * A real PostgreSQL on 127.0.0.1 for tests: the cluster of the Debian {@code postgresql} package
 * ({@code pg_lsclusters}, {@code pg_ctlcluster}), which runs as the {@code postgres} user, since
 * PostgreSQL refuses to run as root. On first use in a JVM it
 * <ol>
 *   <li>finds a cluster with {@code pg_lsclusters}, creating {@code <version> main} with
 *       {@code pg_createcluster} if there is none;</li>
 *   <li>starts it with {@code pg_ctlcluster} if it is down. A cluster that this fixture started
 *       is left running after the tests, and one that was already running is never stopped;</li>
 *   <li>as {@code postgres}, creates the role {@value #USER} (password {@value #PASSWORD}, no other
 *       rights) and its database {@value #DATABASE} unless they exist, resetting the password;</li>
 *   <li>connects over TCP to 127.0.0.1 and the cluster's port with that password (Debian's
 *       {@code pg_hba.conf} allows password logins there).</li>
 * </ol>
 * Every command runs with a timeout and its output goes into the error message. If PostgreSQL is
 * not installed, or cannot be started or reached, the calling test is <em>skipped</em>, with the
 * reason in the test report and on stderr; {@code ./run-tests} installs the package (as root,
 * with apt-get) so that CI runs these tests.
 */
final class PostgresServer {
    static final String USER = "tenure_test";
    static final String PASSWORD = "tenure_test";
    static final String DATABASE = "tenure_test";

    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(120);
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> SEARCH_PATH = List.of("/usr/sbin", "/usr/bin", "/sbin", "/bin");

    private static PostgresServer server; // guarded by PostgresServer.class
    private static String unavailable;     // guarded by PostgresServer.class

    private final String jdbcUrl;
    private final String cluster;

    private PostgresServer(String jdbcUrl, String cluster) {
        this.jdbcUrl = jdbcUrl;
        this.cluster = cluster;
    }

    /**
     * The test PostgreSQL, set up on the first call in this JVM.
     *
     * @throws org.opentest4j.TestAbortedException (skipping the test) if PostgreSQL cannot be had
     */
    static synchronized PostgresServer get() {
        if (server == null && unavailable == null) {
            try {
                server = setUp();
            } catch (Unavailable e) {
                unavailable = "PostgreSQL tests SKIPPED: " + e.getMessage();
                System.err.println("*** " + unavailable);
            }
        }
        if (server == null) {
            Assumptions.abort(unavailable);
        }
        return server;
    }

    String jdbcUrl() {
        return jdbcUrl;
    }

    /** A new connection in auto-commit mode; the caller closes it. */
    Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl, USER, PASSWORD);
    }

    /** A new connection with auto-commit off, as the fence guard requires; the caller closes it. */
    Connection transaction() throws SQLException {
        Connection connection = connect();
        connection.setAutoCommit(false);
        return connection;
    }

    @Override
    public String toString() {
        return "PostgresServer{cluster " + cluster + ", " + jdbcUrl + "}";
    }

    private static PostgresServer setUp() throws Unavailable {
        Path lsclusters = executable("pg_lsclusters").orElseThrow(() -> new Unavailable(
                "PostgreSQL is not installed (no pg_lsclusters). As root on Debian or Ubuntu, ./run-tests installs it; "
                        + "or run: apt-get install postgresql"));
        Cluster cluster = findCluster(lsclusters);
        if (!"root".equals(System.getProperty("user.name"))) {
            // Without root the cluster can be neither started nor set up; use it if it is ready.
            if (cluster == null || !cluster.online()) {
                throw new Unavailable("not running as root, so cannot start a PostgreSQL cluster (pg_lsclusters: "
                        + (cluster == null ? "none" : cluster) + ")");
            }
            return connect(cluster);
        }
        if (cluster == null) {
            createCluster();
            cluster = findCluster(lsclusters);
            if (cluster == null) {
                throw new Unavailable("pg_createcluster ran, but pg_lsclusters still lists no cluster");
            }
        }
        if (!cluster.online()) {
            Path ctl = executable("pg_ctlcluster").orElseThrow(() -> new Unavailable("pg_ctlcluster is missing"));
            run("start PostgreSQL cluster " + cluster, null, ctl.toString(), cluster.version(), cluster.name(), "start");
            System.err.println("PostgresServer: started PostgreSQL cluster " + cluster + "; it is left running");
        }
        createRoleAndDatabase(cluster);
        return connect(cluster);
    }

    /** Connects with the test role, retrying while the server is still starting. */
    private static PostgresServer connect(Cluster cluster) throws Unavailable {
        String url = "jdbc:postgresql://127.0.0.1:" + cluster.port() + "/" + DATABASE
                + "?connectTimeout=10&socketTimeout=120&ApplicationName=tenure-fence-test";
        long deadline = System.nanoTime() + CONNECT_TIMEOUT.toNanos();
        while (true) {
            String problem;
            try (Connection connection = DriverManager.getConnection(url, USER, PASSWORD)) {
                if (connection.isValid(5)) {
                    return new PostgresServer(url, cluster.toString());
                }
                problem = "the connection is not valid";
            } catch (SQLException e) {
                problem = e.getMessage() + " (SQLState " + e.getSQLState() + ")";
                // 57P03: the server is starting up; 08001: nothing listens yet. Anything else will not pass.
                if (!"57P03".equals(e.getSQLState()) && !"08001".equals(e.getSQLState())) {
                    throw new Unavailable("PostgreSQL cluster " + cluster + " refuses " + USER + " on " + url + ": " + problem);
                }
            }
            if (System.nanoTime() - deadline > 0) {
                throw new Unavailable("PostgreSQL cluster " + cluster + " not reachable on " + url + " within "
                        + CONNECT_TIMEOUT.toSeconds() + " s: " + problem);
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    /** The first online cluster, else the first listed, or null if there is none. */
    private static Cluster findCluster(Path lsclusters) throws Unavailable {
        String output = run("list PostgreSQL clusters", null, lsclusters.toString(), "--no-header");
        List<Cluster> clusters = new ArrayList<>();
        for (String line : output.split("\n")) {
            String[] fields = line.trim().split("\\s+");
            if (fields.length >= 4 && fields[2].matches("\\d+")) {
                clusters.add(new Cluster(fields[0], fields[1], Integer.parseInt(fields[2]), fields[3]));
            }
        }
        return clusters.stream().filter(Cluster::online).findFirst().orElse(clusters.isEmpty() ? null : clusters.get(0));
    }

    private static void createCluster() throws Unavailable {
        Path create = executable("pg_createcluster").orElseThrow(() -> new Unavailable("pg_createcluster is missing"));
        String version;
        try (Stream<Path> installed = Files.list(Path.of("/usr/lib/postgresql"))) {
            version = installed.map(p -> p.getFileName().toString()).filter(v -> v.matches("\\d+"))
                    .max(Comparator.comparingInt(Integer::parseInt))
                    .orElseThrow(() -> new Unavailable("no PostgreSQL server version under /usr/lib/postgresql"));
        } catch (IOException e) {
            throw new Unavailable("no PostgreSQL server under /usr/lib/postgresql: " + e.getMessage());
        }
        run("create PostgreSQL cluster " + version + "/main", null, create.toString(), version, "main");
    }

    /** Idempotent: creates what is missing, and (re)sets the role's password. */
    private static void createRoleAndDatabase(Cluster cluster) throws Unavailable {
        Path runuser = executable("runuser").orElseThrow(() -> new Unavailable("runuser is missing"));
        String script = String.join("\n",
                "DO $$ BEGIN",
                "  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '" + USER + "') THEN",
                "    CREATE ROLE " + USER + " LOGIN PASSWORD '" + PASSWORD + "';",
                "  ELSE",
                "    ALTER ROLE " + USER + " LOGIN PASSWORD '" + PASSWORD + "';",
                "  END IF;",
                "END $$;",
                "SELECT 'CREATE DATABASE " + DATABASE + " OWNER " + USER + "'",
                "  WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = '" + DATABASE + "') \\gexec",
                "");
        String[] psql = {runuser.toString(), "-u", "postgres", "--", "psql", "-X", "-q", "-v", "ON_ERROR_STOP=1",
            "-p", Integer.toString(cluster.port()), "-d", "postgres"};
        try {
            run("create the role and database " + USER, script, psql);
        } catch (Unavailable raced) {
            // Another JVM may have created them between our check and our CREATE; the check now holds.
            run("create the role and database " + USER, script, psql);
        }
    }

    /** Runs a command we start ourselves, with a timeout; returns its output, or says why it failed. */
    private static String run(String what, String input, String... command) throws Unavailable {
        Path output = null;
        Path stdin = null;
        try {
            output = Files.createTempFile("tenure-pg-", ".out");
            ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
            if (input != null) {
                stdin = Files.createTempFile("tenure-pg-", ".sql");
                Files.writeString(stdin, input, StandardCharsets.UTF_8);
                builder.redirectInput(stdin.toFile());
            } else {
                builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
            }
            Process process = builder.start();
            if (!process.waitFor(COMMAND_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                process.destroyForcibly();
                throw new Unavailable("could not " + what + ": `" + String.join(" ", command) + "` did not finish within "
                        + COMMAND_TIMEOUT.toSeconds() + " s; output: " + read(output));
            }
            String text = read(output);
            if (process.exitValue() != 0) {
                throw new Unavailable("could not " + what + ": `" + String.join(" ", command) + "` exited with "
                        + process.exitValue() + "; output: " + text);
            }
            return text;
        } catch (IOException e) {
            throw new Unavailable("could not " + what + ": " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Unavailable("interrupted while trying to " + what);
        } finally {
            delete(output);
            delete(stdin);
        }
    }

    private static Optional<Path> executable(String name) {
        List<String> directories = new ArrayList<>();
        String path = System.getenv("PATH");
        if (path != null) {
            directories.addAll(List.of(path.split(":")));
        }
        directories.addAll(SEARCH_PATH);
        return directories.stream().filter(d -> !d.isEmpty()).map(d -> Path.of(d, name))
                .filter(Files::isExecutable).findFirst();
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            return "(unreadable: " + e.getMessage() + ")";
        }
    }

    private static void delete(Path file) {
        if (file != null) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException ignored) {
                // a leftover temporary file is harmless
            }
        }
    }

    private record Cluster(String version, String name, int port, String status) {
        boolean online() {
            return status.startsWith("online");
        }

        @Override
        public String toString() {
            return version + "/" + name + " (port " + port + ", " + status + ")";
        }
    }

    /** PostgreSQL cannot be had here; the message says why. */
    private static final class Unavailable extends Exception {
        Unavailable(String message) {
            super(message);
        }
    }
}
