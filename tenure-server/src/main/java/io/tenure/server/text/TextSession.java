package io.tenure.server.text;

import io.tenure.server.Member;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One text connection as a session, as in dflockd: its holds (each on a lease of its own, with the
 * hold's {@code lease_ttl}), its two-phase places, the leases kept alive while it waits, and what
 * must end when it closes. Commands reach the member's services through it.
 *
 * <p>A hold's lease ({@link Slot}) has a secret of 8 random bytes chosen here, and the client id
 * {@code text:} followed by the first half of the secret's SHA-256 in hex: the grant command
 * carries it, so apply stays deterministic. A hold's token is the secret and the hold's fencing
 * token, 16 hex digits each (the shape of dflockd's own tokens, whose first half is its fence
 * counter): any member can match a token against the holders it has applied (a reconnected
 * client releasing with its token), a token of an earlier hold on the same lease names no hold,
 * and what describes a lock shows only the hash. A lease whose hold ended is kept for the
 * connection's next hold of the same TTL, so that a cycle of acquire and release costs the log
 * two commands, as it does through the SDK.
 *
 * <p>State is touched from the connection's event loop and from the threads that complete service
 * calls; every method here is synchronized on the session, and none blocks.
 */
public final class TextSession {
    private static final Logger LOG = LoggerFactory.getLogger(TextSession.class);
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final HexFormat HEX = HexFormat.of();
    /** The client id prefix of a text hold's lease. */
    public static final String HOLD_CLIENT = "text:";

    /** What a connection must be able to do for its session. */
    interface Wire {
        /** Writes a push line (without the LF) between answers; drops the connection if the client does not read them. */
        void push(String line);

        /** Writes a push line right after the answer of the request being served (a winner's {@code leader elected}). */
        void pushAfterAnswer(String line);

        /** Closes the connection. */
        void close(String reason);

        /** The client's address ({@code host:port}), for the audit trail; empty when unknown. */
        String remote();

        /** The certificate the client presented on a TLS connection, or null (none, or no TLS). */
        java.security.cert.X509Certificate certificate();
    }

    /** The kinds of hold a token names; dflockd keeps each in a namespace of its commands. */
    public enum Kind { LOCK, SEMAPHORE, READ, WRITE, ELECTION }

    /**
     * A lease of this connection's holds: its id, secret and TTL, and when this member last heard
     * it granted or renewed ({@link System#nanoTime}).
     */
    public record Slot(long leaseId, String secret, long ttlMillis, long renewedAt) {
        Slot renewed(long at) {
            return new Slot(leaseId, secret, ttlMillis, at);
        }
    }

    /** A hold of this connection: what it holds, on which lease, with which fencing token. */
    public record Hold(Kind kind, String key, Slot slot, long fencingToken) {
        public String token() {
            return tokenOf(slot.secret(), fencingToken);
        }

        public long leaseId() {
            return slot.leaseId();
        }

        public long ttlMillis() {
            return slot.ttlMillis();
        }
    }

    /** A two-phase place ({@code e}, {@code se}, {@code re}, {@code we}): the lease that keeps it. */
    public record Place(Kind kind, String key, Slot slot, int limit, Hold granted) {
        public long leaseId() {
            return slot.leaseId();
        }
    }

    private final long id;
    private final Member member;
    private final TextSettings settings;
    private final ScheduledExecutorService timer;
    private final Wire wire;
    private final Map<String, Hold> holds = new LinkedHashMap<>();
    private final Map<String, Place> places = new LinkedHashMap<>();
    private final Map<Long, ScheduledFuture<?>> kept = new LinkedHashMap<>();
    /** Leases whose hold ended, by TTL, for the next hold of that TTL. */
    private final Map<Long, java.util.ArrayDeque<Slot>> idle = new java.util.HashMap<>();
    private final List<Runnable> closing = new ArrayList<>();
    private CompletableFuture<Long> connectionLease;
    private int subscriptions;
    private final Map<Class<?>, Object> attachments = new java.util.HashMap<>();
    private final java.util.concurrent.atomic.AtomicReference<Runnable> undelivered = new java.util.concurrent.atomic.AtomicReference<>();
    /** Who the connection authenticated as; null until it did (or when nothing asks it to). */
    private io.tenure.server.security.Principal principal;
    /** The user's token or certificate it authenticated with, checked again at every request; null for none or the shared token. */
    private io.tenure.server.security.Gate.Credential credential;
    private boolean closed;
    /** The client closed its sending side: it is gone (dflockd's code 11), though answers may still be written. */
    private boolean gone;

    TextSession(long id, Member member, TextSettings settings, ScheduledExecutorService timer, Wire wire) {
        this.id = id;
        this.member = member;
        this.settings = settings;
        this.timer = timer;
        this.wire = wire;
    }

    public long id() {
        return id;
    }

    public Member member() {
        return member;
    }

    public TextSettings settings() {
        return settings;
    }

    public ScheduledExecutorService timer() {
        return timer;
    }

    /** Writes a push line ({@code sig ...}, {@code watch ...}, {@code leader ...}) to the client. */
    public void push(String line) {
        wire.push(line);
    }

    /** Writes a push line right after the answer of the request being served, not before it. */
    public void pushAfterAnswer(String line) {
        wire.pushAfterAnswer(line);
    }

    synchronized boolean authenticated() {
        return principal != null;
    }

    /** Authenticated as {@code principal} by the shared {@code --auth-token}: nothing to check again. */
    synchronized void authenticate(io.tenure.server.security.Principal principal) {
        this.principal = principal.from(wire.remote());
    }

    /** Authenticated as the user {@code credential} names (a token or a certificate), checked again at every request. */
    synchronized void authenticate(io.tenure.server.security.Gate.Credential credential) {
        this.principal = credential.principal();
        this.credential = credential;
    }

    /** The user's credential the connection authenticated with, or null (none, or the shared token). */
    synchronized io.tenure.server.security.Gate.Credential credential() {
        return credential;
    }

    /** The certificate the client presented on this TLS connection, or null. */
    java.security.cert.X509Certificate certificate() {
        return wire.certificate();
    }

    /** Who the connection is: the principal it authenticated as, or {@link io.tenure.server.security.Principal#NOBODY}. */
    public synchronized io.tenure.server.security.Principal principal() {
        return principal == null ? io.tenure.server.security.Principal.NOBODY.from(wire.remote()) : principal;
    }

    public synchronized boolean closed() {
        return closed;
    }

    /**
     * The connection's object of {@code type} kept by a group of commands (its registrations),
     * made by {@code make} the first time; the second element says whether it was made now.
     */
    public synchronized <T> T attachment(Class<T> type, java.util.function.Supplier<T> make, boolean[] made) {
        Object existing = attachments.get(type);
        if (existing != null) {
            made[0] = false;
            return type.cast(existing);
        }
        T created = make.get();
        attachments.put(type, created);
        made[0] = true;
        return created;
    }

    /** Whether the connection closed or its client shut down its sending side: an answer may not reach it. */
    public synchronized boolean gone() {
        return closed || gone;
    }

    /**
     * What to do if the answer of the request being served cannot be written (the connection
     * closed first, or the write failed): a pop gives its item back. Set while the request ends,
     * before its answer is returned; the connection takes it with the answer.
     */
    public void onUndelivered(Runnable giveBack) {
        undelivered.set(giveBack);
    }

    /** The undelivered action of the answer about to be written, taken (null when none). */
    Runnable takeUndelivered() {
        return undelivered.getAndSet(null);
    }

    /**
     * Runs {@code cleanup} once when the connection closes or its client is gone (ending a wait,
     * a subscription); at once when that already happened. A wait's cleanup must also end the
     * request that waits, so that its answer is written and the connection can close.
     */
    public void onClose(Runnable cleanup) {
        synchronized (this) {
            if (!closed && !gone) {
                closing.add(cleanup);
                return;
            }
        }
        cleanup.run();
    }

    /**
     * The client shut down its sending side (EOF): like dflockd, the member takes the client as
     * gone. Its waits and subscriptions end now; answers of requests already received are still
     * written, then the connection closes and {@link #close} lets go of the rest.
     */
    void clientGone() {
        List<Runnable> cleanups;
        synchronized (this) {
            if (closed || gone) {
                return;
            }
            gone = true;
            cleanups = List.copyOf(closing);
            closing.clear();
        }
        runAll(cleanups);
    }

    private void runAll(List<Runnable> cleanups) {
        for (Runnable cleanup : cleanups) {
            try {
                cleanup.run();
            } catch (RuntimeException e) {
                LOG.warn("event=text_cleanup_failed connection={} error=\"{}\"", id, e.toString());
            }
        }
    }

    /** Forgets a cleanup registered with {@link #onClose} that is no longer needed. */
    public synchronized void forget(Runnable cleanup) {
        closing.remove(cleanup);
    }

    /** A TTL the member grants: {@code askedMillis} raised to the cluster's minimum (the grant line says what was granted). */
    public long grantableTtl(long askedMillis) {
        return Math.min(Math.max(askedMillis, member.leases().minTtlMillis()), io.tenure.core.Limits.MAX_TTL_MILLIS);
    }

    /**
     * Takes one of the connection's {@code --max-subscriptions} registrations ({@code listen},
     * {@code watch}, {@code observe}); false when they are all taken.
     */
    public synchronized boolean subscribe() {
        if (settings.maxSubscriptions() > 0 && subscriptions >= settings.maxSubscriptions()) {
            return false;
        }
        subscriptions++;
        return true;
    }

    /** Gives back a registration taken with {@link #subscribe}. */
    public synchronized void unsubscribe() {
        if (subscriptions > 0) {
            subscriptions--;
        }
    }

    /**
     * A lease of the connection itself, kept alive while it is open and revoked when it closes:
     * what a blocking pop, a barrier wait or a subscription is bound to, so that a member that
     * loses the connection (or dies) lets go of them within the lease's TTL.
     */
    public CompletableFuture<Long> connectionLease() {
        synchronized (this) {
            if (connectionLease != null) {
                return connectionLease;
            }
            connectionLease = new CompletableFuture<>();
        }
        long ttl = grantableTtl(settings.defaultLeaseTtl().toMillis());
        CompletableFuture<Long> lease = connectionLease;
        member.leases().grant(principal(), 0, ttl, "text-connection:" + member.memberName() + ":" + id).whenComplete((granted, error) -> {
            if (error != null) {
                synchronized (this) {
                    connectionLease = null;
                }
                lease.completeExceptionally(error);
                return;
            }
            keepAlive(granted.leaseId(), granted.ttlMillis());
            lease.complete(granted.leaseId());
            if (closed()) {
                stopKeeping(granted.leaseId());
                revokeQuietly(granted.leaseId());
            }
        });
        return lease;
    }

    // ---- holds and places --------------------------------------------------------------------

    /** A new lease secret: 8 random bytes in hex. */
    static String newSecret() {
        byte[] bytes = new byte[8];
        RANDOM.nextBytes(bytes);
        return HEX.formatHex(bytes);
    }

    /** A hold's token: the lease's secret and the hold's fencing token, 32 hex digits. */
    static String tokenOf(String secret, long fencingToken) {
        return secret + HEX.toHexDigits(fencingToken);
    }

    private static final java.util.regex.Pattern TOKEN = java.util.regex.Pattern.compile("[0-9a-f]{32}");

    /** The lease secret of a well-formed token, or null. */
    static String secretOf(String token) {
        return TOKEN.matcher(token).matches() ? token.substring(0, 16) : null;
    }

    /** The fencing token in a well-formed token. */
    static long fenceOf(String token) {
        return Long.parseUnsignedLong(token.substring(16), 16);
    }

    /** The client id of the lease with {@code secret}. */
    public static String clientIdOf(String secret) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
            return HOLD_CLIENT + HEX.formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    /** A lease of this connection that holds nothing now, with {@code ttlMillis}; null when there is none. */
    synchronized Slot takeIdle(long ttlMillis) {
        java.util.ArrayDeque<Slot> slots = idle.get(ttlMillis);
        return slots == null ? null : slots.pollLast();
    }

    /** Keeps {@code slot}, whose hold ended, for the next hold of its TTL; revokes it when the connection closed. */
    void idle(Slot slot) {
        synchronized (this) {
            if (!closed && !gone) {
                idle.computeIfAbsent(slot.ttlMillis(), t -> new java.util.ArrayDeque<>()).addLast(slot);
                return;
            }
        }
        revokeQuietly(slot.leaseId());
    }

    /** Records a hold of this connection; false when the connection already closed (the caller lets it go). */
    synchronized boolean held(Hold hold) {
        if (closed) {
            return false;
        }
        holds.put(hold.token(), hold);
        return true;
    }

    /** The hold of this connection with {@code token}, or null. */
    synchronized Hold hold(String token) {
        return holds.get(token);
    }

    /** The hold's lease now has {@code ttlMillis} (an {@code n} with another TTL): its lease is kept under that TTL later. */
    synchronized void retimed(Hold hold, long ttlMillis) {
        if (holds.containsKey(hold.token())) {
            Slot slot = hold.slot();
            holds.put(hold.token(), new Hold(hold.kind(), hold.key(), new Slot(slot.leaseId(), slot.secret(), ttlMillis, System.nanoTime()),
                    hold.fencingToken()));
        }
    }

    synchronized Hold dropHold(String token) {
        return holds.remove(token);
    }

    /** Every lease this connection keeps for later holds, taken out. */
    private List<Slot> idleSlots() {
        List<Slot> all = new ArrayList<>();
        idle.values().forEach(all::addAll);
        idle.clear();
        return all;
    }

    synchronized List<Hold> holds() {
        return List.copyOf(holds.values());
    }

    synchronized Place place(Kind kind, String key) {
        return places.get(kind + "\n" + key);
    }

    synchronized void placed(Place place) {
        places.put(place.kind() + "\n" + place.key(), place);
    }

    synchronized Place dropPlace(Kind kind, String key) {
        return places.remove(kind + "\n" + key);
    }

    /** Renews lease {@code leaseId} (one this connection was granted) every TTL/3 until {@link #stopKeeping} or the connection closes. */
    synchronized void keepAlive(long leaseId, long ttlMillis) {
        if (closed || kept.containsKey(leaseId)) {
            return;
        }
        long period = Math.max(100, ttlMillis / 3);
        kept.put(leaseId, timer.scheduleAtFixedRate(() -> member.leases().keepAlive(io.tenure.server.security.Principal.MEMBER, leaseId), period, period, TimeUnit.MILLISECONDS));
    }

    synchronized void stopKeeping(long leaseId) {
        ScheduledFuture<?> renewing = kept.remove(leaseId);
        if (renewing != null) {
            renewing.cancel(false);
        }
    }

    /** Revokes a lease this connection was granted, logging rather than failing when it is already gone. */
    CompletableFuture<Void> revokeQuietly(long leaseId) {
        return member.leases().revoke(io.tenure.server.security.Principal.MEMBER, leaseId).handle((ok, error) -> {
            if (error != null) {
                LOG.debug("event=text_lease_revoke_failed connection={} lease={} error=\"{}\"", id, leaseId, error.getMessage());
            }
            return null;
        });
    }

    /**
     * The connection closed: its waits and subscriptions end, its two-phase places and kept leases
     * go, and with {@code --auto-release-on-disconnect} its holds are released (their leases
     * revoked); without it they stay until their leases end.
     */
    void close() {
        List<Runnable> cleanups;
        List<Hold> held;
        List<Place> placesHeld;
        List<Long> keptLeases;
        CompletableFuture<Long> ownLease;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            cleanups = List.copyOf(closing);
            closing.clear();
            held = List.copyOf(holds.values());
            holds.clear();
            placesHeld = List.copyOf(places.values());
            places.clear();
            keptLeases = new ArrayList<>(kept.keySet());
            for (Slot slot : idleSlots()) {
                keptLeases.add(slot.leaseId());
            }
            kept.values().forEach(f -> f.cancel(false));
            kept.clear();
            ownLease = connectionLease;
        }
        runAll(cleanups);
        for (Place place : placesHeld) {
            if (place.granted() == null || settings.autoReleaseOnDisconnect()) {
                revokeQuietly(place.leaseId());
            }
        }
        for (Long lease : keptLeases) {
            if (held.stream().noneMatch(h -> h.leaseId() == lease) || settings.autoReleaseOnDisconnect()) {
                revokeQuietly(lease);
            }
        }
        if (settings.autoReleaseOnDisconnect()) {
            for (Hold hold : held) {
                revokeQuietly(hold.leaseId());
            }
        }
        if (ownLease != null) {
            ownLease.thenAccept(this::revokeQuietly);
        }
        if (!held.isEmpty()) {
            LOG.info("event=text_connection_closed connection={} holds={} released={}", id, held.size(), settings.autoReleaseOnDisconnect());
        }
    }
}
