package io.tenure.client.fence;

import io.tenure.client.TenureException;
import io.tenure.client.fence.FenceGuard.Mode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * Fences writes to a PostgreSQL database inside the writer's own transaction: the highest
 * accepted token of each resource is a row of a fence table ({@value #DEFAULT_TABLE} unless
 * named otherwise), updated in the same transaction as the application's write, so the two
 * commit or roll back together.
 *
 * <pre>{@code
 * JdbcFenceGuard fence = JdbcFenceGuard.lenient();
 * fence.createTable(connection);                        // once, e.g. at start-up or in a migration
 *
 * try (Connection tx = dataSource.getConnection()) {
 *     tx.setAutoCommit(false);
 *     try {
 *         fence.check(tx, "invoices", lock.fencingToken());   // first: waits for, then locks, the fence row
 *         try (PreparedStatement update = tx.prepareStatement("UPDATE invoices SET total = ? WHERE id = ?")) {
 *             ...
 *         }
 *         tx.commit();                                  // the token and the write become visible together
 *     } catch (SQLException | RuntimeException e) {      // StaleTokenException among them
 *         tx.rollback();                                // the token stays unaccepted
 *         throw e;
 *     }
 * }
 * }</pre>
 *
 * <h2>Why the write is fenced atomically</h2>
 * A check is one conditional statement, {@code UPDATE fence SET last_token = ? WHERE resource = ?
 * AND last_token <= ?} ({@code <} in {@link Mode#STRICTLY_GREATER}). The row lock it takes is held
 * until the caller commits or rolls back, so concurrent writers of one resource are serialised:
 * a writer with another token that reaches the row meanwhile waits, and once the first commits,
 * PostgreSQL re-evaluates the condition against the committed token (in {@code READ COMMITTED},
 * its default). A holder whose token was superseded, even one whose statement arrived first and
 * waited, is therefore refused, and the application's own write in the same transaction is
 * accepted or refused with its token. A rolled-back transaction leaves its token unaccepted and
 * the previous highest in force.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>Works only inside the caller's transaction: it never opens, commits, rolls back or closes
 *       a connection, nor changes its auto-commit; a connection in auto-commit mode is refused
 *       (the token would commit alone, before the write it should fence).</li>
 *   <li>Check before the application's writes. Every writer then locks the fence row first, which
 *       avoids deadlocks between writers and spends no work on a stale token.</li>
 *   <li>The first check of a resource inserts its row with {@code INSERT ... ON CONFLICT DO
 *       NOTHING}, so two first writers racing never abort the caller's transaction: the one that
 *       loses waits for the winner, then the conditional update decides. A stale token costs four
 *       statements (update, insert, update, select of the highest); an accepted one costs one,
 *       or two for the first write.</li>
 *   <li>Under {@code REPEATABLE READ} or {@code SERIALIZABLE}, a token accepted by a concurrent
 *       transaction makes PostgreSQL fail the statement with a serialization failure (SQLState
 *       {@code 40001}): roll back and retry the transaction, which then gets a definite answer.</li>
 *   <li>The fence row stays locked while the transaction lasts, so a holder paused in the middle
 *       of one holds the other writers back until PostgreSQL ends it: set the session's
 *       {@code lock_timeout} or {@code idle_in_transaction_session_timeout} to bound that.</li>
 *   <li>Resources are at most {@value #MAX_RESOURCE_LENGTH} characters and contain no NUL; other
 *       bad arguments are refused as by every {@link FenceGuard}, before any statement is sent.</li>
 * </ul>
 * Uses PostgreSQL's {@code ON CONFLICT} (9.5 and later); tested against PostgreSQL 15. Immutable
 * and thread-safe: share one instance; each connection is used by one thread at a time, as JDBC
 * requires.
 */
public final class JdbcFenceGuard {
    /** The fence table's name unless another is given. */
    public static final String DEFAULT_TABLE = "tenure_fence";
    /** The longest resource name, in characters: the width of the table's key column. */
    public static final int MAX_RESOURCE_LENGTH = 1024;

    /** An unquoted identifier that PostgreSQL keeps whole (at most 63 bytes): nothing to escape. */
    private static final Pattern PLAIN_IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");

    private final String table;
    private final Mode mode;
    private final String advanceSql;
    private final String insertFirstSql;
    private final String highestSql;

    private JdbcFenceGuard(String table, Mode mode) {
        if (table == null || !PLAIN_IDENTIFIER.matcher(table).matches()) {
            throw new IllegalArgumentException("table must be a plain SQL identifier (a letter or '_', then letters, "
                    + "digits or '_', at most 63), got " + (table == null ? "null" : "'" + table + "'"));
        }
        this.table = table;
        this.mode = Objects.requireNonNull(mode, "mode");
        String admitted = mode == Mode.AT_LEAST ? "<=" : "<";
        this.advanceSql = "UPDATE " + table + " SET last_token = ? WHERE resource = ? AND last_token " + admitted + " ?";
        this.insertFirstSql = "INSERT INTO " + table + " (resource, last_token) VALUES (?, ?) ON CONFLICT (resource) DO NOTHING";
        this.highestSql = "SELECT last_token FROM " + table + " WHERE resource = ?";
    }

    /** A guard on {@value #DEFAULT_TABLE} in {@link Mode#AT_LEAST}: a holder may write many times under one grant. */
    public static JdbcFenceGuard lenient() {
        return new JdbcFenceGuard(DEFAULT_TABLE, Mode.AT_LEAST);
    }

    /** A guard on {@value #DEFAULT_TABLE} in {@link Mode#STRICTLY_GREATER}: each token is accepted once. */
    public static JdbcFenceGuard strict() {
        return new JdbcFenceGuard(DEFAULT_TABLE, Mode.STRICTLY_GREATER);
    }

    /**
     * A guard on the fence table {@code table}.
     *
     * @throws IllegalArgumentException if {@code table} is not a plain SQL identifier
     *                                  ({@code [A-Za-z_][A-Za-z0-9_]*}, at most 63 characters)
     */
    public static JdbcFenceGuard of(String table, Mode mode) {
        return new JdbcFenceGuard(table, mode);
    }

    public String table() {
        return table;
    }

    public Mode mode() {
        return mode;
    }

    /**
     * Creates the fence table if it does not exist. Runs on {@code connection} as it is: with
     * auto-commit on it commits by itself, otherwise it commits with the caller's transaction.
     * Two sessions creating the same table at the same moment can still collide in PostgreSQL's
     * catalog; create it once, at start-up or in a schema migration.
     */
    public void createTable(Connection connection) throws SQLException {
        requireConnection(connection, "connection");
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS " + table
                    + " (resource VARCHAR(" + MAX_RESOURCE_LENGTH + ") PRIMARY KEY, last_token BIGINT NOT NULL)");
        }
    }

    /**
     * Accepts {@code token} for {@code resource} in transaction {@code tx}, which then holds the
     * resource's fence row locked until it ends. The acceptance takes effect when {@code tx}
     * commits, and is undone if it rolls back.
     *
     * @throws StaleTokenException      if a token that the mode does not admit this one after has
     *                                  been committed; the transaction is still usable, and should
     *                                  be rolled back
     * @throws IllegalArgumentException if {@code tx} is null or in auto-commit mode, {@code resource}
     *                                  is null, blank, too long or contains NUL, or {@code token <= 0}
     * @throws SQLException             if a statement fails (the fence table is missing, a
     *                                  serialization failure, a lost connection)
     */
    public void check(Connection tx, String resource, long token) throws SQLException {
        OptionalLong refusedBy = accept(tx, resource, token);
        if (refusedBy.isPresent()) {
            throw new StaleTokenException(resource, token, refusedBy.getAsLong());
        }
    }

    /** Like {@link #check}, but answers {@code false} instead of throwing when the token is stale. */
    public boolean tryAccept(Connection tx, String resource, long token) throws SQLException {
        return accept(tx, resource, token).isEmpty();
    }

    /**
     * The highest token accepted for {@code resource} as {@code connection} sees it (its own
     * uncommitted acceptance included), or {@code 0} if none was. Takes no lock.
     */
    public long highestAccepted(Connection connection, String resource) throws SQLException {
        requireConnection(connection, "connection");
        requireResource(resource);
        return selectHighest(connection, resource).orElse(0);
    }

    /**
     * This guard as a {@link FenceGuard} bound to transaction {@code tx}, for code written against
     * the interface. Same rules as the methods taking a connection; an {@link SQLException} is
     * thrown as a {@link TenureException} whose cause it is.
     */
    public FenceGuard within(Connection tx) {
        requireConnection(tx, "tx");
        return new TransactionFence(tx);
    }

    @Override
    public String toString() {
        return "JdbcFenceGuard{table=" + table + ", mode=" + mode + "}";
    }

    /** Empty if {@code token} was accepted; otherwise the highest accepted token, which refused it. */
    private OptionalLong accept(Connection tx, String resource, long token) throws SQLException {
        requireConnection(tx, "tx");
        requireResource(resource);
        FenceArguments.requireToken(token);
        if (tx.getAutoCommit()) {
            throw new IllegalArgumentException("tx is in auto-commit mode: the token would commit before, and apart from, "
                    + "the write it fences; call setAutoCommit(false) and commit the write and the check together");
        }
        if (advance(tx, resource, token) || insertFirst(tx, resource, token)) {
            return OptionalLong.empty();
        }
        // The row exists: either it held a newer token all along, or a concurrent first write
        // committed it while our insert waited. The conditional update decides either way.
        if (advance(tx, resource, token)) {
            return OptionalLong.empty();
        }
        OptionalLong highest = selectHighest(tx, resource);
        if (highest.isEmpty()) {
            throw new IllegalStateException("the fence row of resource '" + resource + "' in table " + table
                    + " vanished while token " + token + " was checked; fence rows must never be deleted");
        }
        return highest;
    }

    private boolean advance(Connection tx, String resource, long token) throws SQLException {
        try (PreparedStatement update = tx.prepareStatement(advanceSql)) {
            update.setLong(1, token);
            update.setString(2, resource);
            update.setLong(3, token);
            return update.executeUpdate() == 1;
        }
    }

    private boolean insertFirst(Connection tx, String resource, long token) throws SQLException {
        try (PreparedStatement insert = tx.prepareStatement(insertFirstSql)) {
            insert.setString(1, resource);
            insert.setLong(2, token);
            return insert.executeUpdate() == 1;
        }
    }

    private OptionalLong selectHighest(Connection connection, String resource) throws SQLException {
        try (PreparedStatement select = connection.prepareStatement(highestSql)) {
            select.setString(1, resource);
            try (ResultSet row = select.executeQuery()) {
                return row.next() ? OptionalLong.of(row.getLong(1)) : OptionalLong.empty();
            }
        }
    }

    private static void requireConnection(Connection connection, String name) {
        if (connection == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
    }

    private static void requireResource(String resource) {
        FenceArguments.requireResource(resource);
        int length = resource.codePointCount(0, resource.length());
        if (length > MAX_RESOURCE_LENGTH) {
            throw new IllegalArgumentException("resource must be at most " + MAX_RESOURCE_LENGTH
                    + " characters (the fence table's key column), got " + length);
        }
        if (resource.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("resource must not contain NUL (PostgreSQL text cannot hold it)");
        }
    }

    /** The guard bound to one transaction. */
    private final class TransactionFence implements FenceGuard {
        private final Connection tx;

        TransactionFence(Connection tx) {
            this.tx = tx;
        }

        @Override
        public void check(String resource, long token) {
            try {
                JdbcFenceGuard.this.check(tx, resource, token);
            } catch (SQLException e) {
                throw failed(e);
            }
        }

        @Override
        public boolean tryAccept(String resource, long token) {
            try {
                return JdbcFenceGuard.this.tryAccept(tx, resource, token);
            } catch (SQLException e) {
                throw failed(e);
            }
        }

        @Override
        public long highestAccepted(String resource) {
            try {
                return JdbcFenceGuard.this.highestAccepted(tx, resource);
            } catch (SQLException e) {
                throw failed(e);
            }
        }

        private TenureException failed(SQLException e) {
            return new TenureException("fence table " + table + " could not be used: " + e.getMessage(), e);
        }

        @Override
        public String toString() {
            return JdbcFenceGuard.this + " within " + tx;
        }
    }
}
