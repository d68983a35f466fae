package io.tenure.client.fence;

import io.tenure.client.Scope;
import io.tenure.client.TenureException;
import io.tenure.client.fence.FenceGuard.Mode;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Fences writes of byte ranges, inodes and paths to a PostgreSQL database inside the writer's own
 * transaction, as {@link JdbcFenceGuard} does for resources: what the guard accepts is written by
 * the caller's transaction, and commits or rolls back with the application's write.
 *
 * <pre>{@code
 * JdbcScopeFenceGuard fence = JdbcScopeFenceGuard.lenient();
 * fence.createTables(connection);                        // once, e.g. in a schema migration
 *
 * try (Connection tx = dataSource.getConnection()) {
 *     tx.setAutoCommit(false);                           // READ COMMITTED, PostgreSQL's default
 *     try {
 *         fence.check(tx, token, Scope.byteRange(42, 100, 200));   // first: locks inode 42's fence row
 *         ... write bytes [100, 200) of inode 42 in tx ...
 *         tx.commit();
 *     } catch (SQLException | RuntimeException e) {       // StaleTokenException, LockScopeMismatchException among them
 *         tx.rollback();
 *         throw e;
 *     }
 * }
 * }</pre>
 *
 * <h2>Tables</h2>
 * Three tables, named after a prefix ({@value #DEFAULT_TABLE_PREFIX} unless given):
 * <ul>
 *   <li>{@code <prefix>_range (inode, start_byte, end_byte, token)}: the highest token accepted
 *       for each byte of each inode, as disjoint segments, merged with neighbours of the same token
 *       (as {@link InMemoryScopeFenceGuard} keeps them: at most one row per run of bytes last
 *       written under one token, one per inode after a write of the whole inode);</li>
 *   <li>{@code <prefix>_inode (inode)}: one row per inode ever written, locked by each writer of
 *       the inode;</li>
 *   <li>{@code <prefix>_path (path, token)}: the highest token accepted for each path written
 *       ({@code 0} for a path that is only the ancestor of one, or whose check was refused in a
 *       transaction committed anyway). Rows are never deleted, since writers lock them: one per
 *       path checked and per ancestor of one.</li>
 * </ul>
 *
 * <h2>Why the write is fenced atomically</h2>
 * A write of a byte range or inode first locks the inode's row ({@code SELECT ... FOR UPDATE},
 * inserting it on the first write) and keeps it until the caller's transaction ends: writers of one
 * inode run one transaction at a time, even for disjoint ranges (those are both accepted, the later
 * after the earlier's commit). Holding it, the guard reads the segments around the range, refuses
 * the token if one overlapping it is higher, and otherwise rewrites those segments.
 *
 * <p>A write of a path locks its ancestors' rows shared ({@code FOR SHARE}, root first) and its own
 * row exclusively ({@code FOR UPDATE}), inserting any missing row. A writer of an ancestor or of a
 * descendant needs one of those rows exclusively, so overlapping path writes run one transaction at
 * a time, while writers of siblings share their common ancestors and do not wait for each other
 * (except for the first writes under a new directory: a row inserted by a transaction that has not
 * yet committed holds off others inserting it). Holding the locks, the guard reads the highest
 * token of the ancestors, the path and its subtree (a range scan of the primary key, whose
 * collation is {@code "C"} so that a subtree is one range) and refuses or accepts.
 *
 * <h2>Isolation</h2>
 * Each statement must see what was committed before it, which {@code READ COMMITTED} (PostgreSQL's
 * default) gives once the locks are held. {@code SERIALIZABLE} works too: PostgreSQL then fails
 * one of two conflicting transactions with a serialization failure (SQLState {@code 40001}); roll
 * back and retry it. {@code REPEATABLE READ} is refused: its snapshot, taken before the locks were
 * granted, would miss a segment or path a concurrent writer inserted and committed meanwhile. The
 * isolation is asked of the connection ({@link Connection#getTransactionIsolation()}, one
 * statement for pgjdbc) before each check.
 *
 * <h2>Contract</h2>
 * <ul>
 *   <li>Works only inside the caller's transaction: it never opens, commits, rolls back or closes
 *       a connection; auto-commit mode is refused.</li>
 *   <li>Check before the application's writes. One check per transaction cannot deadlock with
 *       another (rows are locked root first, one inode at a time); several checks in one
 *       transaction can, like any rows locked in no set order: PostgreSQL then aborts one
 *       (SQLState {@code 40P01}), which is rolled back and retried.</li>
 *   <li>A refused token leaves the transaction usable, with the inode's or path's rows locked until
 *       it ends; roll it back. A rolled-back transaction leaves nothing accepted.</li>
 *   <li>Each check asks the connection's isolation first (one statement). A byte range write
 *       then costs four more (lock the inode, read the segments around the range, a batch of
 *       deletes and one of inserts), two more the first time an inode is written; a path write
 *       four (lock the ancestors, lock the path, read the highest, update), more when its rows
 *       are new. A refusal stops after the read.</li>
 *   <li>Bad arguments are refused as by every {@link ScopeFenceGuard}, before any statement is sent.</li>
 * </ul>
 * Uses PostgreSQL's {@code ON CONFLICT}, arrays and the {@code "C"} collation; tested against
 * PostgreSQL 15. Immutable and thread-safe; each connection is used by one thread at a time.
 */
public final class JdbcScopeFenceGuard {
    /** The tables' prefix unless another is given. */
    public static final String DEFAULT_TABLE_PREFIX = "tenure_scope_fence";

    /** A plain identifier that leaves room for the longest suffix, {@code _range}, in PostgreSQL's 63 bytes. */
    private static final Pattern PLAIN_PREFIX = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,56}");

    private final String prefix;
    private final Mode mode;
    private final String inodeTable;
    private final String rangeTable;
    private final String pathTable;

    private JdbcScopeFenceGuard(String prefix, Mode mode) {
        if (prefix == null || !PLAIN_PREFIX.matcher(prefix).matches()) {
            throw new IllegalArgumentException("table prefix must be a plain SQL identifier (a letter or '_', then letters, "
                    + "digits or '_', at most 57), got " + (prefix == null ? "null" : "'" + prefix + "'"));
        }
        this.prefix = prefix;
        this.mode = Objects.requireNonNull(mode, "mode");
        this.inodeTable = prefix + "_inode";
        this.rangeTable = prefix + "_range";
        this.pathTable = prefix + "_path";
    }

    /** A guard on the default tables in {@link Mode#AT_LEAST}: a holder may write a region many times under one grant. */
    public static JdbcScopeFenceGuard lenient() {
        return new JdbcScopeFenceGuard(DEFAULT_TABLE_PREFIX, Mode.AT_LEAST);
    }

    /** A guard on the default tables in {@link Mode#STRICTLY_GREATER}: each token is accepted once per byte or path. */
    public static JdbcScopeFenceGuard strict() {
        return new JdbcScopeFenceGuard(DEFAULT_TABLE_PREFIX, Mode.STRICTLY_GREATER);
    }

    /**
     * A guard on the tables {@code <tablePrefix>_inode}, {@code _range} and {@code _path}.
     *
     * @throws IllegalArgumentException if {@code tablePrefix} is not a plain SQL identifier
     *                                  ({@code [A-Za-z_][A-Za-z0-9_]*}, at most 57 characters)
     */
    public static JdbcScopeFenceGuard of(String tablePrefix, Mode mode) {
        return new JdbcScopeFenceGuard(tablePrefix, mode);
    }

    public String tablePrefix() {
        return prefix;
    }

    public Mode mode() {
        return mode;
    }

    /**
     * Creates the three tables if they do not exist, on {@code connection} as it is (committing by
     * itself in auto-commit mode). Create them once, at start-up or in a schema migration.
     */
    public void createTables(Connection connection) throws SQLException {
        requireConnection(connection, "connection");
        try (Statement statement = connection.createStatement()) {
            statement.execute("CREATE TABLE IF NOT EXISTS " + inodeTable + " (inode BIGINT PRIMARY KEY)");
            statement.execute("CREATE TABLE IF NOT EXISTS " + rangeTable + " (inode BIGINT NOT NULL, start_byte BIGINT NOT NULL, "
                    + "end_byte BIGINT NOT NULL, token BIGINT NOT NULL, PRIMARY KEY (inode, start_byte), "
                    + "CHECK (0 <= start_byte AND start_byte < end_byte))");
            statement.execute("CREATE TABLE IF NOT EXISTS " + pathTable + " (path VARCHAR(" + Scope.MAX_PATH_LENGTH
                    + ") COLLATE \"C\" PRIMARY KEY, token BIGINT NOT NULL)");
        }
    }

    /**
     * Accepts {@code token} for {@code region} in transaction {@code tx}, which then holds the
     * region's fence rows locked until it ends. The acceptance takes effect when {@code tx}
     * commits, and is undone if it rolls back.
     *
     * @throws LockScopeMismatchException if {@code region} is not covered by the token's scopes; no
     *                                    statement was sent
     * @throws StaleTokenException        if an overlapping region committed a token the mode does not
     *                                    admit this one after; the transaction is still usable, and
     *                                    should be rolled back
     * @throws IllegalArgumentException   if {@code tx} is null, in auto-commit mode or in {@code
     *                                    REPEATABLE READ}, or {@code token} or {@code region} is null,
     *                                    or the region is named
     * @throws SQLException               if a statement fails (a missing table, a serialization
     *                                    failure or deadlock, a lost connection)
     */
    public void check(Connection tx, ScopedToken token, Scope region) throws SQLException {
        OptionalLong refusedBy = accept(tx, token, region);
        if (refusedBy.isPresent()) {
            throw new StaleTokenException(region, token.token(), refusedBy.getAsLong());
        }
    }

    /** Like {@link #check}, but answers {@code false} instead of throwing when the token is stale. */
    public boolean tryAccept(Connection tx, ScopedToken token, Scope region) throws SQLException {
        return accept(tx, token, region).isEmpty();
    }

    /**
     * The highest token accepted for a region overlapping {@code region} as {@code connection} sees
     * it (its own uncommitted acceptances included), or {@code 0}. Takes no lock.
     */
    public long highestAccepted(Connection connection, Scope region) throws SQLException {
        requireConnection(connection, "connection");
        FenceArguments.requireRegion(region);
        if (region instanceof Scope.Path path) {
            return highestOfPath(connection, path.path());
        }
        RangeFence.Span span = RangeFence.Span.of(region);
        return window(connection, span).highest(span.start(), span.end());
    }

    /**
     * This guard as a {@link ScopeFenceGuard} bound to transaction {@code tx}. Same rules as the
     * methods taking a connection; an {@link SQLException} is thrown as a {@link TenureException}
     * whose cause it is.
     */
    public ScopeFenceGuard within(Connection tx) {
        requireConnection(tx, "tx");
        return new TransactionFence(tx);
    }

    @Override
    public String toString() {
        return "JdbcScopeFenceGuard{tables=" + prefix + "_*, mode=" + mode + "}";
    }

    /** Empty if {@code token} was accepted; otherwise the highest overlapping token, which refused it. */
    private OptionalLong accept(Connection tx, ScopedToken token, Scope region) throws SQLException {
        requireConnection(tx, "tx");
        FenceArguments.requireScopedToken(token);
        FenceArguments.requireRegion(region);
        token.requireCovers(region);
        if (tx.getAutoCommit()) {
            throw new IllegalArgumentException("tx is in auto-commit mode: the token would commit before, and apart from, "
                    + "the write it fences; call setAutoCommit(false) and commit the write and the check together");
        }
        if (tx.getTransactionIsolation() == Connection.TRANSACTION_REPEATABLE_READ) {
            throw new IllegalArgumentException("tx is in REPEATABLE READ: its snapshot would miss regions that concurrent "
                    + "writers commit while it waits for their locks; use READ COMMITTED (the default) or SERIALIZABLE");
        }
        if (region instanceof Scope.Path path) {
            return acceptPath(tx, path.path(), token.token());
        }
        return acceptRange(tx, RangeFence.Span.of(region), token.token());
    }

    // ---- byte ranges and inodes ----

    private OptionalLong acceptRange(Connection tx, RangeFence.Span span, long token) throws SQLException {
        lockInode(tx, span.inode());
        RangeFence window = window(tx, span);
        long highest = window.highest(span.start(), span.end());
        if (!mode.admits(token, highest)) {
            return OptionalLong.of(highest);
        }
        List<RangeFence.Segment> before = window.segments();
        window.assign(span.start(), span.end(), token);
        List<RangeFence.Segment> after = window.segments();
        rewrite(tx, span.inode(), before, after);
        return OptionalLong.empty();
    }

    /** Locks the inode's row, inserting it on the inode's first write; rows are never deleted. */
    private void lockInode(Connection tx, long inode) throws SQLException {
        if (selectInodeForUpdate(tx, inode)) {
            return;
        }
        // A concurrent first writer's uncommitted row makes this insert wait for its transaction.
        try (PreparedStatement insert = tx.prepareStatement(
                "INSERT INTO " + inodeTable + " (inode) VALUES (?) ON CONFLICT DO NOTHING")) {
            insert.setLong(1, inode);
            if (insert.executeUpdate() == 1) {
                return;
            }
        }
        if (!selectInodeForUpdate(tx, inode)) {
            throw new IllegalStateException("the row of inode " + inode + " in table " + inodeTable
                    + " vanished while it was locked; fence rows must never be deleted");
        }
    }

    private boolean selectInodeForUpdate(Connection tx, long inode) throws SQLException {
        try (PreparedStatement select = tx.prepareStatement("SELECT inode FROM " + inodeTable + " WHERE inode = ? FOR UPDATE")) {
            select.setLong(1, inode);
            try (ResultSet row = select.executeQuery()) {
                return row.next();
            }
        }
    }

    /**
     * The segments a write of the span can change or merge with: the last one starting before it
     * (which may overlap or touch it) and every one starting inside it or at its end.
     */
    private RangeFence window(Connection connection, RangeFence.Span span) throws SQLException {
        RangeFence window = new RangeFence();
        try (PreparedStatement select = connection.prepareStatement("SELECT start_byte, end_byte, token FROM " + rangeTable
                + " WHERE inode = ? AND start_byte >= COALESCE((SELECT MAX(start_byte) FROM " + rangeTable
                + " WHERE inode = ? AND start_byte < ?), ?) AND start_byte <= ?")) {
            select.setLong(1, span.inode());
            select.setLong(2, span.inode());
            select.setLong(3, span.start());
            select.setLong(4, span.start());
            select.setLong(5, span.end());
            try (ResultSet row = select.executeQuery()) {
                while (row.next()) {
                    window.load(new RangeFence.Segment(row.getLong(1), row.getLong(2), row.getLong(3)));
                }
            }
        }
        return window;
    }

    /** Deletes the segments the write changed and inserts their replacements. */
    private void rewrite(Connection tx, long inode, List<RangeFence.Segment> before, List<RangeFence.Segment> after)
            throws SQLException {
        Set<RangeFence.Segment> kept = new HashSet<>(before);
        kept.retainAll(after);
        List<RangeFence.Segment> gone = before.stream().filter(segment -> !kept.contains(segment)).toList();
        List<RangeFence.Segment> made = after.stream().filter(segment -> !kept.contains(segment)).toList();
        if (!gone.isEmpty()) { // deleted first: a replacement may start where a deleted segment did
            try (PreparedStatement delete = tx.prepareStatement("DELETE FROM " + rangeTable + " WHERE inode = ? AND start_byte = ?")) {
                for (RangeFence.Segment segment : gone) {
                    delete.setLong(1, inode);
                    delete.setLong(2, segment.start());
                    delete.addBatch();
                }
                delete.executeBatch();
            }
        }
        if (!made.isEmpty()) {
            try (PreparedStatement insert = tx.prepareStatement(
                    "INSERT INTO " + rangeTable + " (inode, start_byte, end_byte, token) VALUES (?, ?, ?, ?)")) {
                for (RangeFence.Segment segment : made) {
                    insert.setLong(1, inode);
                    insert.setLong(2, segment.start());
                    insert.setLong(3, segment.end());
                    insert.setLong(4, segment.token());
                    insert.addBatch();
                }
                insert.executeBatch();
            }
        }
    }

    // ---- paths ----

    private OptionalLong acceptPath(Connection tx, String path, long token) throws SQLException {
        List<String> ancestors = PathFence.strictAncestors(path);
        if (!ancestors.isEmpty() && lockAncestors(tx, ancestors) < ancestors.size()) {
            insertPaths(tx, ancestors);
            if (lockAncestors(tx, ancestors) < ancestors.size()) {
                throw new IllegalStateException("ancestor rows of path " + path + " in table " + pathTable
                        + " vanished while they were locked; fence rows must never be deleted");
            }
        }
        if (!selectPathForUpdate(tx, path)) {
            insertPaths(tx, List.of(path));
            if (!selectPathForUpdate(tx, path)) {
                throw new IllegalStateException("the row of path " + path + " in table " + pathTable
                        + " vanished while it was locked; fence rows must never be deleted");
            }
        }
        long highest = highestOfPath(tx, path);
        if (!mode.admits(token, highest)) {
            return OptionalLong.of(highest);
        }
        try (PreparedStatement update = tx.prepareStatement("UPDATE " + pathTable + " SET token = ? WHERE path = ?")) {
            update.setLong(1, token);
            update.setString(2, path);
            update.executeUpdate();
        }
        return OptionalLong.empty();
    }

    /** Locks the ancestors' rows shared, root first (the "C" order of a path's ancestors); answers how many exist. */
    private int lockAncestors(Connection tx, List<String> ancestors) throws SQLException {
        Array paths = tx.createArrayOf("varchar", ancestors.toArray());
        try (PreparedStatement select = tx.prepareStatement("SELECT path FROM " + pathTable
                + " WHERE path = ANY(?) ORDER BY path FOR SHARE")) {
            select.setArray(1, paths);
            int locked = 0;
            try (ResultSet row = select.executeQuery()) {
                while (row.next()) {
                    locked++;
                }
            }
            return locked;
        } finally {
            paths.free();
        }
    }

    private boolean selectPathForUpdate(Connection tx, String path) throws SQLException {
        try (PreparedStatement select = tx.prepareStatement("SELECT path FROM " + pathTable + " WHERE path = ? FOR UPDATE")) {
            select.setString(1, path);
            try (ResultSet row = select.executeQuery()) {
                return row.next();
            }
        }
    }

    /** Inserts the missing rows, root first; a concurrent uncommitted insert of one makes this wait for its transaction. */
    private void insertPaths(Connection tx, List<String> paths) throws SQLException {
        try (PreparedStatement insert = tx.prepareStatement(
                "INSERT INTO " + pathTable + " (path, token) VALUES (?, 0) ON CONFLICT DO NOTHING")) {
            for (String path : paths) {
                insert.setString(1, path);
                insert.addBatch();
            }
            insert.executeBatch();
        }
    }

    /** The highest token of the path, its ancestors and its subtree ({@code prefix <= path < upper} in "C" order). */
    private long highestOfPath(Connection connection, String path) throws SQLException {
        List<String> ancestors = PathFence.strictAncestors(path);
        ancestors.add(path);
        String below = path.equals("/") ? "/" : path + "/";
        String upper = below.substring(0, below.length() - 1) + "0"; // '0' follows '/'
        Array paths = connection.createArrayOf("varchar", ancestors.toArray());
        try (PreparedStatement select = connection.prepareStatement("SELECT COALESCE(MAX(token), 0) FROM " + pathTable
                + " WHERE path = ANY(?) OR (path >= ? COLLATE \"C\" AND path < ? COLLATE \"C\")")) {
            select.setArray(1, paths);
            select.setString(2, below);
            select.setString(3, upper);
            try (ResultSet row = select.executeQuery()) {
                row.next();
                return row.getLong(1);
            }
        } finally {
            paths.free();
        }
    }

    private static void requireConnection(Connection connection, String name) {
        if (connection == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
    }

    /** The guard bound to one transaction. */
    private final class TransactionFence implements ScopeFenceGuard {
        private final Connection tx;

        TransactionFence(Connection tx) {
            this.tx = tx;
        }

        @Override
        public void check(ScopedToken token, Scope region) {
            try {
                JdbcScopeFenceGuard.this.check(tx, token, region);
            } catch (SQLException e) {
                throw failed(e);
            }
        }

        @Override
        public boolean tryAccept(ScopedToken token, Scope region) {
            try {
                return JdbcScopeFenceGuard.this.tryAccept(tx, token, region);
            } catch (SQLException e) {
                throw failed(e);
            }
        }

        @Override
        public long highestAccepted(Scope region) {
            try {
                return JdbcScopeFenceGuard.this.highestAccepted(tx, region);
            } catch (SQLException e) {
                throw failed(e);
            }
        }

        private TenureException failed(SQLException e) {
            return new TenureException("scope fence tables " + prefix + "_* could not be used: " + e.getMessage(), e);
        }

        @Override
        public String toString() {
            return JdbcScopeFenceGuard.this + " within " + tx;
        }
    }
}
