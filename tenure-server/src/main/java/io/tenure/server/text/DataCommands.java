package io.tenure.server.text;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.CharacterEscapes;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import io.tenure.core.TenureState;
import io.tenure.core.counter.CounterTable;
import io.tenure.core.kernel.Result;
import io.tenure.core.kv.KvTable;
import io.tenure.core.list.ListTable;
import io.tenure.core.list.ListView;
import io.tenure.server.Acquires;
import io.tenure.server.Member;
import io.tenure.server.RequestRejected;
import io.tenure.server.kv.KeyValues;
import io.tenure.server.list.Lists;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.Predicate;

/**
 * The data commands of dflockd's {@code redis-feats} line, each a thin translation to the
 * member's services: counters ({@code incr decr get cset}), keys ({@code kset kget kdel kcas}) and
 * lists ({@code lpush rpush lpop rpop llen lrange blpop brpop}).
 *
 * <p><b>Limits.</b> {@code --max-keys} counts counters, keys and lists together, as dflockd does: a
 * request that would create one while that many exist is answered {@code error_max_keys};
 * {@code --max-list-length} caps the items a push may leave in a list ({@code error_list_full};
 * a push handed straight to a waiting pop stores nothing and is never refused for it). Both are
 * checked on this member's applied state before anything is proposed: a guard, not an invariant.
 * Tenure's own caps answer the same statuses (a store at its most keys, a list at its most items).
 *
 * <p><b>Blocking pops</b> wait bound to the connection's lease ({@link TextSession#connectionLease}),
 * under a request id of their own. When the connection closes while one waits, its wait is
 * withdrawn through the log, and an item a push handed it meanwhile goes back to the list (to the
 * next waiter, or to the end it came from), as for a gRPC call that was cancelled: a popped item
 * goes to exactly one caller. A pop whose item is ready after its connection closed gives the item
 * back the same way. (The connection closes when its session does: a reset, the member closing it.
 * A client's FIN alone only ends its input, and the request being served is still answered.)
 *
 * <p><b>Names.</b> Counters, keys and lists each have a namespace of their own, in Tenure as in
 * dflockd: one name may be a lock, a counter, a key and a list at once.
 *
 * <p><b>TTLs</b> are whole seconds, 0 for none, up to Tenure's longest (24 h; longer is {@code error}).
 *
 * <p><b>Values</b> are the UTF-8 text of the argument line. A value that cannot be framed on one
 * line (it holds a LF: written through another front end) is answered {@code error}; a popped one
 * goes back to the list first.
 */
final class DataCommands {
    private static final SecureRandom RANDOM = new SecureRandom();
    /** dflockd's JSON: Go's encoding, which escapes {@code < > &} and U+2028/U+2029 as well, in lowercase hex. */
    private static final ObjectWriter JSON = new ObjectMapper().writer().with(new GoEscapes());

    private DataCommands() {}

    static void register(Map<String, TextCommand> into) {
        into.put("incr", (s, r) -> add(s, r, false));
        into.put("decr", (s, r) -> add(s, r, true));
        into.put("get", DataCommands::get);
        into.put("cset", DataCommands::cset);
        into.put("kset", DataCommands::kset);
        into.put("kget", DataCommands::kget);
        into.put("kdel", DataCommands::kdel);
        into.put("kcas", DataCommands::kcas);
        into.put("lpush", (s, r) -> push(s, r, true));
        into.put("rpush", (s, r) -> push(s, r, false));
        into.put("lpop", (s, r) -> popNow(s, r.key(), true));
        into.put("rpop", (s, r) -> popNow(s, r.key(), false));
        into.put("llen", DataCommands::llen);
        into.put("lrange", DataCommands::lrange);
        into.put("blpop", (s, r) -> blockingPop(s, r, true));
        into.put("brpop", (s, r) -> blockingPop(s, r, false));
    }

    // ---- counters ----------------------------------------------------------------------------

    // incr name <delta> | decr name <delta>
    private static CompletableFuture<String> add(TextSession session, TextRequest request, boolean down) {
        long delta = TextArgs.of(request).count(1, 1).integer(0);
        if (down && delta == Long.MIN_VALUE) {
            throw TextRefusal.error(TextRefusal.BAD_INTEGER, "decr delta " + delta + " cannot be negated");
        }
        String name = request.key();
        checkMaxKeys(session, s -> s.primitive(CounterTable.class).counter(name) != null);
        // An overflow is refused by apply (FAILED_PRECONDITION, not a kind mismatch): a bare error.
        return session.member().counters().add(session.principal(), name, down ? -delta : delta, 0).thenApply(change -> "ok " + change.value());
    }

    // get name
    private static CompletableFuture<String> get(TextSession session, TextRequest request) {
        return session.member().counters().read(session.principal(), request.key()).thenApply(read -> "ok " + read.value());
    }

    // cset name <value>
    private static CompletableFuture<String> cset(TextSession session, TextRequest request) {
        long value = TextArgs.of(request).count(1, 1).integer(0);
        String name = request.key();
        checkMaxKeys(session, s -> s.primitive(CounterTable.class).counter(name) != null);
        return session.member().counters().set(session.principal(), name, value, 0).thenApply(change -> "ok");
    }

    // ---- keys --------------------------------------------------------------------------------

    // kset key <value>[TAB<ttl>]
    private static CompletableFuture<String> kset(TextSession session, TextRequest request) {
        String arg = request.arg();
        if (arg.isEmpty()) {
            throw TextRefusal.error(TextRefusal.MALFORMED_ARG, "kset needs <value>[TAB<ttl>]");
        }
        String value = arg;
        long ttlSeconds = 0;
        int tab = arg.indexOf('\t');
        if (tab >= 0) {
            value = arg.substring(0, tab);
            String ttl = arg.substring(tab + 1);
            if (value.isEmpty()) {
                throw TextRefusal.error(TextRefusal.MALFORMED_ARG, "kset with an empty value");
            }
            if (ttl.indexOf('\t') >= 0) {
                throw TextRefusal.error(TextRefusal.MALFORMED_ARG, "kset value must not contain a tab");
            }
            ttlSeconds = seconds(ttl);
        }
        String key = request.key();
        checkMaxKeys(session, s -> s.primitive(KvTable.class).get(key) != null);
        return atMostKeys(session.member().keyValues().put(session.principal(), key, utf8(value), 0, millis(ttlSeconds), 0)).thenApply(written -> "ok");
    }

    // kget key
    private static CompletableFuture<String> kget(TextSession session, TextRequest request) {
        return session.member().keyValues().read(session.principal(), request.key()).thenApply(read -> {
            if (read.entry() == null) {
                throw TextRefusal.status("nil", "no key " + read.key());
            }
            return okWith(text(read.entry().value()));
        });
    }

    // kdel key
    private static CompletableFuture<String> kdel(TextSession session, TextRequest request) {
        return session.member().keyValues().delete(session.principal(), request.key(), -1, 0).thenApply(removal -> "ok");
    }

    // kcas key <old>TAB<new>TAB<ttl>
    private static CompletableFuture<String> kcas(TextSession session, TextRequest request) {
        String arg = request.arg();
        if (arg.isEmpty()) {
            throw TextRefusal.error(TextRefusal.MALFORMED_ARG, "kcas needs <old>TAB<new>TAB<ttl>");
        }
        int first = arg.indexOf('\t');
        int last = arg.lastIndexOf('\t');
        if (first < 0 || first == last || arg.indexOf('\t', first + 1) != last) {
            throw TextRefusal.error(TextRefusal.MALFORMED_ARG, "kcas needs exactly two tabs");
        }
        String old = arg.substring(0, first);
        String value = arg.substring(first + 1, last);
        String ttl = arg.substring(last + 1);
        if (value.isEmpty()) {
            throw TextRefusal.error(TextRefusal.MALFORMED_ARG, "kcas with an empty new value");
        }
        long ttlSeconds = ttl.isEmpty() ? 0 : seconds(ttl);
        String key = request.key();
        KeyValues kv = session.member().keyValues();
        CompletableFuture<KeyValues.Swap> swap;
        if (old.isEmpty()) {
            // Create if absent: only this one can create a key.
            checkMaxKeys(session, s -> s.primitive(KvTable.class).get(key) != null);
            swap = kv.compareAndSet(session.principal(), key, KeyValues.Compare.ABSENT, 0, null, utf8(value), 0, millis(ttlSeconds), 0);
        } else {
            swap = kv.compareAndSet(session.principal(), key, KeyValues.Compare.VALUE, 0, utf8(old), utf8(value), 0, millis(ttlSeconds), 0);
        }
        return atMostKeys(swap).thenApply(done -> {
            if (!done.swapped()) {
                throw TextRefusal.status("cas_conflict", "key " + key + " is not as expected");
            }
            return "ok";
        });
    }

    // ---- lists -------------------------------------------------------------------------------

    // lpush list <value> | rpush list <value>
    private static CompletableFuture<String> push(TextSession session, TextRequest request, boolean left) {
        String value = request.arg();
        if (value.isEmpty()) {
            throw TextRefusal.error(TextRefusal.MALFORMED_ARG, request.command() + " needs <value>");
        }
        String name = request.key();
        int maxKeys = session.settings().maxKeys();
        int most = session.settings().maxListLength() > 0 ? Math.min(session.settings().maxListLength(), ListTable.MAX_LENGTH)
                : ListTable.MAX_LENGTH;
        String refusal = session.member().stateMachine().read(s -> {
            ListTable lists = s.primitive(ListTable.class);
            ListView list = lists.list(name);
            if (list == null) {
                return maxKeys > 0 && keyCount(s) >= maxKeys ? "error_max_keys" : null;
            }
            return list.waiting().isEmpty() && list.length() >= most ? "error_list_full" : null;
        });
        if (refusal != null) {
            throw TextRefusal.status(refusal, "list " + name + ": " + refusal);
        }
        return session.member().lists().push(session.principal(), name, utf8(value), left, 0)
                .exceptionally(error -> {
                    // Tenure's own cap of a list's items (FAILED_PRECONDITION, not a kind mismatch).
                    throw refusedAs(error, "error_list_full");
                })
                .thenApply(pushed -> "ok " + pushed.length());
    }

    // lpop list | rpop list (and a blocking pop with timeout 0): never waits
    private static CompletableFuture<String> popNow(TextSession session, String name, boolean left) {
        Lists lists = session.member().lists();
        long requestId = newRequestId();
        return lists.popNow(session.principal(), name, left, requestId).thenApply(popped -> delivered(session, name, 0, requestId, popped));
    }

    // llen list
    private static CompletableFuture<String> llen(TextSession session, TextRequest request) {
        // An empty range (start after stop): the length alone, no items copied.
        return session.member().lists().read(session.principal(), request.key(), 1, 0).thenApply(read -> "ok " + read.length());
    }

    // lrange list <start> <stop>
    private static CompletableFuture<String> lrange(TextSession session, TextRequest request) {
        TextArgs args = TextArgs.of(request).count(2, 2);
        long start = args.integer(0);
        long stop = args.integer(1);
        String name = request.key();
        Member member = session.member();
        // The read barrier and checks of a list read, then the whole range from one applied state at
        // least that fresh (the service's read stops at its listing limit; dflockd's does not).
        return member.lists().read(session.principal(), name, 1, 0).thenApply(ignored -> {
            List<byte[]> items = member.stateMachine().read(s -> s.primitive(ListTable.class).range(name, start, stop, Integer.MAX_VALUE));
            List<String> texts = new ArrayList<>(items.size());
            for (byte[] item : items) {
                texts.add(text(item));
            }
            try {
                return "ok " + JSON.writeValueAsString(texts);
            } catch (JsonProcessingException e) {
                throw new IllegalStateException("a list of strings is always JSON", e);
            }
        });
    }

    // blpop list <timeout> | brpop list <timeout>
    private static CompletableFuture<String> blockingPop(TextSession session, TextRequest request, boolean left) {
        long timeoutSeconds = TextArgs.of(request).count(1, 1).seconds(0);
        String name = request.key();
        // dflockd makes the list it waits on: a pop on a list that does not exist counts as creating one.
        checkMaxKeys(session, s -> s.primitive(ListTable.class).list(name) != null);
        if (timeoutSeconds == 0) {
            return popNow(session, name, left);
        }
        long timeoutMs = millis(timeoutSeconds);
        Lists lists = session.member().lists();
        long requestId = newRequestId();
        return session.connectionLease().thenCompose(lease -> {
            Acquires.Wait<Lists.Outcome> wait = lists.pop(session.principal(), name, left, lease, timeoutMs, requestId);
            CompletableFuture<Lists.Outcome> result = wait.outcome().thenApply(popped -> popped);
            Runnable abandon = () -> {
                // The connection closed or its client is gone: forget the call, through the log withdraw
                // its wait or give back what a push handed it meanwhile, and end the request.
                wait.abandon();
                if (!wait.outcome().isDone()) {
                    lists.abandon(name, lease, requestId, null);
                }
                result.completeExceptionally(TextRefusal.error(11, "client gone"));
            };
            session.onClose(abandon);
            return result.whenComplete((popped, error) -> session.forget(abandon))
                    .thenApply(popped -> delivered(session, name, lease, requestId, popped));
        });
    }

    /**
     * The answer of a pop: its item, or {@code nil}. An item popped for a connection that closed
     * meanwhile, or that cannot be written on one line, goes back to the list.
     */
    private static String delivered(TextSession session, String name, long lease, long requestId, Lists.Outcome popped) {
        if (!popped.popped()) {
            throw TextRefusal.status("nil", "list " + name + " is empty");
        }
        String value = text(popped.value());
        if (session.gone() || value.indexOf('\n') >= 0) {
            session.member().lists().abandon(name, lease, requestId, popped);
            throw TextRefusal.status("error", session.closed() ? "the connection closed before the item of " + name + " was answered"
                    : "the item of " + name + " holds a line feed: it went back to the list");
        }
        // An answer the connection cannot write (it closed first, the write failed) gives the item back.
        session.onUndelivered(() -> session.member().lists().abandon(name, lease, requestId, popped));
        return okWith(value);
    }

    // ---- shared ------------------------------------------------------------------------------

    /**
     * {@code --max-keys}: refuses a request that would create a counter, key or list (it does not
     * {@code exists} yet) while that many exist already.
     */
    private static void checkMaxKeys(TextSession session, Predicate<TenureState> exists) {
        int max = session.settings().maxKeys();
        if (max <= 0) {
            return;
        }
        int existing = session.member().stateMachine().read(s -> exists.test(s) ? -1 : keyCount(s));
        if (existing >= max) {
            throw TextRefusal.status("error_max_keys", existing + " counters, keys and lists exist, --max-keys is " + max);
        }
    }

    /** Counters, keys and lists, as dflockd counts its keys. */
    private static int keyCount(TenureState s) {
        return s.primitive(CounterTable.class).counterCount() + s.primitive(KvTable.class).keyCount()
                + s.primitive(ListTable.class).listCount();
    }

    /** A put refused by the store's own cap of keys (its only FAILED_PRECONDITION) answers {@code error_max_keys}. */
    private static <T> CompletableFuture<T> atMostKeys(CompletableFuture<T> change) {
        return change.exceptionally(error -> {
            throw refusedAs(error, "error_max_keys");
        });
    }

    /** {@code status} for a FAILED_PRECONDITION refusal that is not a kind mismatch; the error itself otherwise. */
    private static RuntimeException refusedAs(Throwable error, String status) {
        Throwable cause = error;
        while (cause instanceof CompletionException && cause.getCause() != null) {
            cause = cause.getCause();
        }
        if (cause instanceof RequestRejected r && r.code() == Result.Code.FAILED_PRECONDITION && !TextCommands.isKindMismatch(r)) {
            return TextRefusal.status(status, r.getMessage());
        }
        return error instanceof RuntimeException e ? e : new CompletionException(error);
    }

    /** Whole seconds, as dflockd reads a TTL: 0 or more, at most what fits in 64-bit nanoseconds. */
    private static long seconds(String field) {
        long s;
        try {
            s = Long.parseLong(field);
        } catch (NumberFormatException e) {
            throw TextRefusal.error(TextRefusal.BAD_INTEGER, "not an integer: " + field);
        }
        if (s < 0 || s > TextArgs.MAX_SECONDS) {
            throw TextRefusal.error(TextRefusal.BAD_INTEGER, "seconds out of range: " + field);
        }
        return s;
    }

    private static long millis(long seconds) {
        return Math.multiplyExact(seconds, 1000L);
    }

    /** {@code ok <value>}, or a bare {@code ok} for an empty value, as dflockd writes it. */
    private static String okWith(String value) {
        if (value.indexOf('\n') >= 0) {
            throw TextRefusal.status("error", "the value holds a line feed, which one answer line cannot carry");
        }
        return value.isEmpty() ? "ok" : "ok " + value;
    }

    /** A pop's request id: its own, never 0, so that the log can tell its item from any other's. */
    private static long newRequestId() {
        long id;
        do {
            id = RANDOM.nextLong();
        } while (id == 0);
        return id;
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] value) {
        return new String(value, StandardCharsets.UTF_8);
    }

    /**
     * Go's {@code encoding/json} string escapes: the short ones for backspace, form feed, LF, CR and
     * tab, a six-character escape in lowercase hex for the other control characters, and the same
     * for {@code < > &}, U+2028 and U+2029 (Go's HTML-safe output).
     */
    private static final class GoEscapes extends CharacterEscapes {
        private final int[] ascii = CharacterEscapes.standardAsciiEscapesForJSON();

        GoEscapes() {
            for (int c = 0; c < 0x20; c++) {
                if (c != '\b' && c != '\f' && c != '\n' && c != '\r' && c != '\t') {
                    ascii[c] = ESCAPE_CUSTOM;
                }
            }
            ascii['<'] = ESCAPE_CUSTOM;
            ascii['>'] = ESCAPE_CUSTOM;
            ascii['&'] = ESCAPE_CUSTOM;
        }

        @Override
        public int[] getEscapeCodesForAscii() {
            return ascii;
        }

        @Override
        public SerializableString getEscapeSequence(int ch) {
            if (ch < 0x20 || ch == '<' || ch == '>' || ch == '&' || ch == 0x2028 || ch == 0x2029) {
                return new SerializedString(String.format("\\u%04x", ch));
            }
            return null;
        }
    }
}
