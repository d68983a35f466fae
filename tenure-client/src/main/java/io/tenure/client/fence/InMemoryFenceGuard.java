package io.tenure.client.fence;

import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A {@link FenceGuard} for a resource that lives in this process: a cache, an in-memory table, a
 * service that owns its data and takes writes from remote lock holders.
 *
 * <pre>{@code
 * InMemoryFenceGuard guard = InMemoryFenceGuard.lenient();
 *
 * // in the service that owns the invoices, for each write a holder sends with its token:
 * guard.write("invoices", request.fencingToken(), () -> invoices.put(request.id(), request.body()));
 * }</pre>
 *
 * <p>{@link #write} is the way to fence a write: the token is checked, the write runs, and only
 * then is the token recorded, all while no other token for that resource can be accepted. If the
 * write throws, the token is not accepted (as a rolled-back transaction would leave it), and the
 * exception propagates. {@link #check} on its own fences only the instant of the check: a holder
 * that pauses between {@code check} and its write can still overwrite newer work, unless the
 * caller orders the two under its own lock for the resource.
 *
 * <p>Thread-safe. Each resource has its own monitor, so holders of different resources never
 * wait for each other; a slow write delays only writes to the same resource. Resources are never
 * forgotten: the map grows with the number of distinct resources. Nothing survives a restart, so
 * use this only for state that a restart loses too; for durable state, fence in the store's own
 * transaction ({@link JdbcFenceGuard}).
 */
public final class InMemoryFenceGuard implements FenceGuard {
    private final Mode mode;
    private final ConcurrentHashMap<String, Fence> fences = new ConcurrentHashMap<>();

    private InMemoryFenceGuard(Mode mode) {
        this.mode = Objects.requireNonNull(mode, "mode");
    }

    /** A guard in {@link Mode#AT_LEAST}: a holder may write many times under one grant. */
    public static InMemoryFenceGuard lenient() {
        return new InMemoryFenceGuard(Mode.AT_LEAST);
    }

    /** A guard in {@link Mode#STRICTLY_GREATER}: each token is accepted once. */
    public static InMemoryFenceGuard strict() {
        return new InMemoryFenceGuard(Mode.STRICTLY_GREATER);
    }

    public static InMemoryFenceGuard of(Mode mode) {
        return new InMemoryFenceGuard(mode);
    }

    public Mode mode() {
        return mode;
    }

    @Override
    public void check(String resource, long token) {
        write(resource, token, () -> { });
    }

    @Override
    public boolean tryAccept(String resource, long token) {
        try {
            check(resource, token);
            return true;
        } catch (StaleTokenException stale) {
            return false;
        }
    }

    @Override
    public long highestAccepted(String resource) {
        FenceArguments.requireResource(resource);
        Fence fence = fences.get(resource);
        if (fence == null) {
            return 0;
        }
        synchronized (fence) {
            return fence.highestAccepted;
        }
    }

    /**
     * Runs {@code write} if {@code token} is admitted for {@code resource}, and then accepts the
     * token. No other token for the resource is checked or accepted while {@code write} runs, so
     * a stale holder cannot slip its write in between; keep the write short.
     *
     * @throws StaleTokenException      if the token is not admitted; {@code write} did not run
     * @throws IllegalArgumentException if {@code resource} is null or blank, or {@code token <= 0}
     * @throws RuntimeException         whatever {@code write} throws; the token is then not accepted
     */
    public void write(String resource, long token, Runnable write) {
        FenceArguments.requireResource(resource);
        FenceArguments.requireToken(token);
        Objects.requireNonNull(write, "write");
        Fence fence = fences.computeIfAbsent(resource, r -> new Fence());
        synchronized (fence) {
            if (!mode.admits(token, fence.highestAccepted)) {
                throw new StaleTokenException(resource, token, fence.highestAccepted);
            }
            write.run();
            fence.highestAccepted = token;
        }
    }

    @Override
    public String toString() {
        return "InMemoryFenceGuard{mode=" + mode + ", resources=" + fences.size() + "}";
    }

    /** One resource's fence; its monitor orders the checks and writes of that resource. */
    private static final class Fence {
        private long highestAccepted; // guarded by this
    }
}
