/**
 * Fencing: the storage side of locks, which refuses the writes of a holder whose lock has moved on.
 *
 * <ul>
 *   <li>{@link io.tenure.client.fence.FenceGuard} fences a resource named like a plain lock with
 *       the lock's token ({@link io.tenure.client.fence.InMemoryFenceGuard},
 *       {@link io.tenure.client.fence.JdbcFenceGuard});</li>
 *   <li>{@link io.tenure.client.fence.ScopeFenceGuard} fences writes to regions of files (byte
 *       ranges, inodes, paths) with the token of a grant of lock scopes and the scopes it holds
 *       ({@link io.tenure.client.fence.ScopedToken}): a region outside those scopes is refused
 *       ({@link io.tenure.client.fence.LockScopeMismatchException}), and so is an older token
 *       where a newer one has written ({@link io.tenure.client.fence.StaleTokenException})
 *       ({@link io.tenure.client.fence.InMemoryScopeFenceGuard},
 *       {@link io.tenure.client.fence.JdbcScopeFenceGuard}).</li>
 * </ul>
 *
 * <p>Fencing byte-range writes: each writer holds a set of ranges under one token, and the store
 * checks every write against it and against what newer tokens have written.
 *
 * <pre>{@code
 * InMemoryScopeFenceGuard guard = InMemoryScopeFenceGuard.lenient();
 *
 * ScopedToken a = ScopedToken.of(40, Scope.byteRange(42, 0, 200));     // A's grant: bytes [0,200) of inode 42
 * guard.write(a, Scope.byteRange(42, 0, 200), () -> file.write(0, data));
 *
 * // A pauses past its lease; B is granted [100,300) with a newer token and writes it
 * ScopedToken b = ScopedToken.of(50, Scope.byteRange(42, 100, 300));
 * guard.write(b, Scope.byteRange(42, 100, 300), () -> file.write(100, other));
 *
 * guard.write(a, Scope.byteRange(42, 150, 200), ...);   // StaleTokenException: B wrote there with 50
 * guard.write(a, Scope.byteRange(42, 0, 100), ...);     // accepted: no newer token wrote [0,100)
 * guard.write(b, Scope.byteRange(42, 0, 50), ...);      // LockScopeMismatchException: B does not hold [0,50)
 * }</pre>
 *
 * Every refusal is a {@link io.tenure.client.fence.FenceRefusedException}: nothing was accepted,
 * and the writer must stop.
 */
package io.tenure.client.fence;
