package io.tenure.client.fence;

import io.tenure.client.Scope;
import io.tenure.client.fence.FenceGuard.Mode;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link ScopeFenceGuard} for a store of files that lives in this process, taking writes of byte
 * ranges, inodes and paths from remote holders of lock scopes.
 *
 * <pre>{@code
 * InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
 *
 * // in the store, for each write a holder sends with the ScopedToken of its grant:
 * Scope region = Scope.byteRange(request.inode(), request.offset(), request.offset() + request.data().length);
 * guard.write(request.token(), region, () -> file.write(request.offset(), request.data()));
 * }</pre>
 *
 * <p>{@link #write} checks the region against the token's scopes and against the tokens accepted
 * for overlapping regions, runs the write, and only then accepts the token, while no overlapping
 * region can be checked. If the write throws, the token is not accepted and the exception
 * propagates. {@link #check} alone fences only its instant (see {@link FenceGuard}).
 *
 * <h2>What is kept</h2>
 * Per inode, the highest token accepted for each byte, as disjoint segments: a write replaces the
 * segments it overlaps and merges with neighbours of its token, so an inode holds at most one
 * segment per run of bytes last written under one token (at most {@code 2w + 1} for {@code w}
 * accepted writes, one after a write of the whole inode). Per path, the highest token accepted
 * for it, in a trie; accepting a path drops every entry below it, and a path under an ancestor
 * holding the same token is not stored. Nothing is forgotten otherwise: memory grows with the
 * inodes and paths written and the fragmentation of the writes, not with their number. Nothing
 * survives a restart: use this only for state a restart loses too, and {@link
 * JdbcScopeFenceGuard} for durable state.
 *
 * <p>Thread-safe. Each inode has its own monitor, so writers of different inodes never wait for
 * each other; writes to one inode, even to disjoint ranges, run one at a time, as do all writes to
 * paths (a path overlaps its whole subtree, so they share one monitor). Keep the writes short.
 */
public final class InMemoryScopeFenceGuard implements ScopeFenceGuard {
    private final Mode mode;
    private final ConcurrentHashMap<Long, RangeFence> inodes = new ConcurrentHashMap<>();
    private final PathFence paths = new PathFence(); // guarded by itself

    private InMemoryScopeFenceGuard(Mode mode) {
        this.mode = Objects.requireNonNull(mode, "mode");
    }

    /** A guard in {@link Mode#AT_LEAST}: a holder may write a region many times under one grant. */
    public static InMemoryScopeFenceGuard lenient() {
        return new InMemoryScopeFenceGuard(Mode.AT_LEAST);
    }

    /** A guard in {@link Mode#STRICTLY_GREATER}: each token is accepted once for each byte or path. */
    public static InMemoryScopeFenceGuard strict() {
        return new InMemoryScopeFenceGuard(Mode.STRICTLY_GREATER);
    }

    public static InMemoryScopeFenceGuard of(Mode mode) {
        return new InMemoryScopeFenceGuard(mode);
    }

    public Mode mode() {
        return mode;
    }

    @Override
    public void check(ScopedToken token, Scope region) {
        write(token, region, () -> { });
    }

    @Override
    public boolean tryAccept(ScopedToken token, Scope region) {
        try {
            check(token, region);
            return true;
        } catch (StaleTokenException stale) {
            return false;
        }
    }

    @Override
    public long highestAccepted(Scope region) {
        FenceArguments.requireRegion(region);
        if (region instanceof Scope.Path path) {
            synchronized (paths) {
                return paths.highest(path.path());
            }
        }
        RangeFence.Span span = RangeFence.Span.of(region);
        RangeFence fence = inodes.get(span.inode());
        if (fence == null) {
            return 0;
        }
        synchronized (fence) {
            return fence.highest(span.start(), span.end());
        }
    }

    /**
     * Runs {@code write} if {@code region} is covered by {@code token}'s scopes and the token is
     * admitted for every part of the region, and then accepts the token there. No overlapping
     * region is checked or accepted while {@code write} runs.
     *
     * @throws LockScopeMismatchException if {@code region} is not covered; {@code write} did not run
     * @throws StaleTokenException        if the token is not admitted; {@code write} did not run
     * @throws IllegalArgumentException   if {@code token} or {@code region} is null, or the region is named
     * @throws NullPointerException       if {@code write} is null
     * @throws RuntimeException           whatever {@code write} throws; the token is then not accepted
     */
    public void write(ScopedToken token, Scope region, Runnable write) {
        FenceArguments.requireScopedToken(token);
        FenceArguments.requireRegion(region);
        Objects.requireNonNull(write, "write");
        token.requireCovers(region);
        long offered = token.token();
        if (region instanceof Scope.Path path) {
            synchronized (paths) {
                admit(region, offered, paths.highest(path.path()));
                write.run();
                paths.assign(path.path(), offered);
            }
            return;
        }
        RangeFence.Span span = RangeFence.Span.of(region);
        RangeFence fence = inodes.computeIfAbsent(span.inode(), inode -> new RangeFence());
        synchronized (fence) {
            admit(region, offered, fence.highest(span.start(), span.end()));
            write.run();
            fence.assign(span.start(), span.end(), offered);
        }
    }

    private void admit(Scope region, long token, long highest) {
        if (!mode.admits(token, highest)) {
            throw new StaleTokenException(region, token, highest);
        }
    }

    /** The segments kept for {@code inode}, for tests of the bound. */
    int segments(long inode) {
        RangeFence fence = inodes.get(inode);
        if (fence == null) {
            return 0;
        }
        synchronized (fence) {
            return fence.size();
        }
    }

    /** The paths kept with a token, for tests of the bound. */
    int paths() {
        synchronized (paths) {
            return paths.size();
        }
    }

    @Override
    public String toString() {
        return "InMemoryScopeFenceGuard{mode=" + mode + ", inodes=" + inodes.size() + "}";
    }
}
