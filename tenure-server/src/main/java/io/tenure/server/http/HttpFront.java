package io.tenure.server.http;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.util.JavalinLogger;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.StatusResponse;
import io.tenure.server.Causes;
import io.tenure.server.Member;
import io.tenure.server.RequestIds;
import io.tenure.server.ServerConfig;
import io.tenure.server.Unauthenticated;
import io.tenure.server.security.Accounts;
import io.tenure.server.security.Gate;
import io.tenure.server.security.Principal;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.SecureRequestCustomizer;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.SslConnectionFactory;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.ssl.SslContextFactory;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP front end (Javalin on Jetty): the JSON lock, semaphore, election and barrier API under
 * {@code /v1} ({@link LockApi}, {@link SemaphoreApi}, {@link ScopeApi}, {@link ElectionApi}, {@link BarrierApi}, {@link LatchApi}, {@link CounterApi}, {@link KvApi}, {@link ListApi}, {@link SignalApi}), {@code /metrics} in
 * the Prometheus text format, {@code /healthz} and {@code /readyz}. Like the gRPC front end it
 * only translates: the lock, semaphore, election and lease services decide, and failures become answers in one table ({@link Failures}).
 *
 * <p>Every answer carries {@code X-Request-Id} ({@link RequestIds}). Every error body is
 * {@code {"error": code, "message": text, "field": name}}, {@code field} only when one field is
 * at fault; a 503 also has {@code Retry-After}.
 */
public final class HttpFront implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HttpFront.class);
    /** How long {@code /readyz} waits for this member to apply what the leader has committed. */
    static final long READY_TIMEOUT_MS = 2_000;
    /** A 503's {@code Retry-After}, in seconds: about one election, after which a leader is usually known. */
    static final String RETRY_AFTER_SECONDS = "1";
    static final String METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";
    private static final String JSON_CONTENT_TYPE = "application/json";
    private static final String REQUEST_ID = "tenure.request_id";

    static final ObjectMapper JSON = new ObjectMapper()
            .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS);

    static {
        // Javalin's start-up lines ("Listening on ...") would break the one-line-per-event log.
        JavalinLogger.startupInfo = false;
    }

    private final Member member;
    private final int maxBodyBytes;
    private final ScheduledExecutorService timer;
    /** Write the signal event streams, so that a slow reader never blocks the member's delivery. */
    private final java.util.concurrent.ExecutorService sseWriters = java.util.concurrent.Executors.newCachedThreadPool(daemon("tenure-http-sse"));
    private final SignalApi signals;
    private final LockApi locks;
    private final SemaphoreApi semaphores;
    private final ScopeApi scopes;
    private final ElectionApi elections;
    private final BarrierApi barriers;
    private final LatchApi latches;
    private final Javalin app;
    /** Users, roles and tokens; its gate says who each request is. */
    private final Accounts accounts;
    /** The request attribute holding the request's {@link Principal}. */
    private static final String PRINCIPAL = "tenure.principal";
    private final int maxConnections;
    private final OpenConnections openConnections = new OpenConnections();

    private HttpFront(Member member, ServerConfig config, io.tenure.server.security.TlsKeys tls, Accounts accounts) {
        this.accounts = accounts;
        this.member = member;
        this.maxBodyBytes = config.limits().maxHttpBodyBytes();
        this.maxConnections = config.limits().maxConnections();
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, daemon("tenure-http-timer"));
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
        LeaseRecipe leases = new LeaseRecipe(member, timer);
        this.locks = new LockApi(member, leases);
        this.semaphores = new SemaphoreApi(member, leases);
        this.scopes = new ScopeApi(member, leases);
        this.elections = new ElectionApi(member, leases);
        this.barriers = new BarrierApi(member, leases);
        this.latches = new LatchApi(member, leases);
        this.signals = new SignalApi(member, timer, sseWriters, config.minTtl());
        this.app = Javalin.create(c -> {
            c.showJavalinBanner = false;
            c.startupWatcherEnabled = false;
            c.http.prefer405over404 = true;
            c.http.maxRequestSize = maxBodyBytes;
            QueuedThreadPool threads = new QueuedThreadPool(200, 4);
            threads.setName("tenure-http");
            threads.setDaemon(true);
            c.jetty.threadPool = threads;
            c.jetty.modifyServer(server -> server.setErrorHandler(new JsonBadMessages()));
            c.jetty.addConnector((server, http) -> {
                configure(http);
                ServerConnector connector = tls == null ? new ServerConnector(server, new HttpConnectionFactory(http))
                        : new ServerConnector(server, new SslConnectionFactory(jettyTls(tls), HttpVersion.HTTP_1_1.asString()),
                                new HttpConnectionFactory(withClientCertificates(http)));
                connector.setHost(config.host());
                connector.setPort(config.httpPort());
                connector.addBean(openConnections);
                // An acquire may wait silently for up to wait_ms: the connection must outlive it.
                connector.setIdleTimeout(LeaseRecipe.MAX_WAIT_MS + LeaseRecipe.WAIT_SLACK_MS);
                return connector;
            });
        });
        routes();
    }

    /**
     * Jetty's TLS from the member's reloading key and trust managers: a handshake gets the
     * certificate current at that moment, so a rotation needs no restart.
     */
    private static SslContextFactory.Server jettyTls(io.tenure.server.security.TlsKeys tls) {
        SslContextFactory.Server factory = new SslContextFactory.Server();
        factory.setSslContext(tls.jdkContext());
        factory.setIncludeProtocols(io.tenure.server.security.TlsKeys.protocols());
        factory.setNeedClientAuth(tls.settings().clientCertAuth());
        // Jetty's own checks of the host name against the certificate need a key store it loaded itself.
        factory.setSniRequired(false);
        return factory;
    }

    /** Marks requests as HTTPS and puts the client's certificate on the request, where the principal is read. */
    private static HttpConfiguration withClientCertificates(HttpConfiguration http) {
        SecureRequestCustomizer secure = new SecureRequestCustomizer();
        secure.setSniHostCheck(false);
        http.addCustomizer(secure);
        return http;
    }

    /**
     * Starts serving on {@code config.host():config.httpPort()} (0 picks a free port).
     *
     * @throws IOException when the port cannot be bound
     */
    /** As {@link #start(Member, ServerConfig)}; with {@code tls}, HTTPS only (TLS 1.2 or later), with client certificates where it asks for them. */
    public static HttpFront start(Member member, ServerConfig config, io.tenure.server.security.TlsKeys tls, Accounts accounts)
            throws IOException {
        HttpFront front = new HttpFront(member, config, tls, accounts);
        try {
            front.app.start();
        } catch (RuntimeException e) {
            front.close();
            throw new IOException("cannot listen for HTTP on " + config.host() + ":" + config.httpPort() + ": " + e.getMessage(), e);
        }
        return front;
    }

    /** The bound port (useful when the configured port was 0). */
    public int port() {
        return app.port();
    }

    /**
     * The method and path of every route registered ({@code "POST /v1/locks/*"}), as Javalin
     * matches them: what the OpenAPI contract test compares with {@link OpenApiDocument}.
     */
    List<String> servedRoutes() {
        return app.unsafeConfig().pvt.internalRouter.allHttpHandlers().stream().map(io.javalin.router.ParsedEndpoint::getEndpoint)
                .filter(e -> e.getMethod().isHttpMethod()).map(e -> e.getMethod() + " " + e.getPath()).toList();
    }

    /** Stops accepting and closes open connections; waits (and in-flight acquires) end with them. */
    @Override
    public void close() {
        try {
            app.stop();
        } catch (RuntimeException e) {
            LOG.warn("event=http_stop_failed reason=\"{}\"", e.toString());
        }
        timer.shutdownNow();
        sseWriters.shutdownNow();
    }

    /**
     * Lock, semaphore and election names may hold an encoded {@code /} or {@code %}, and empty or dot
     * segments: Jetty's default refuses such paths as ambiguous, which matters to servlet path
     * mapping, not to us (the routes read the raw path, see {@link NamePath}).
     */
    private static void configure(HttpConfiguration http) {
        http.setUriCompliance(UriCompliance.DEFAULT.with("tenure-lock-names",
                UriCompliance.Violation.AMBIGUOUS_PATH_SEPARATOR,
                UriCompliance.Violation.AMBIGUOUS_PATH_ENCODING,
                UriCompliance.Violation.AMBIGUOUS_EMPTY_SEGMENT,
                UriCompliance.Violation.AMBIGUOUS_PATH_SEGMENT));
        http.setSendServerVersion(false);
        http.setSendXPoweredBy(false);
    }

    /**
     * A draining member refuses new API calls (503, retry elsewhere). The member's limits, before any work: beyond {@code --max-connections} open connections a
     * request is answered 429 and its connection closed; the API (not health, readiness, metrics
     * or a renew, which keeps a lease alive) takes a token from the member's request-rate guard.
     */
    private void guard(Context ctx) {
        if (openConnections.isOverLimit(ctx)) {
            ctx.header("Connection", "close");
            throw new Failure(ErrorCode.LIMIT_EXCEEDED, null, "this member serves at most " + maxConnections
                    + " HTTP connections (--max-connections); use another member or fewer connections");
        }
        String path = ctx.path();
        if (member.draining() && path.startsWith("/v1/")) {
            throw new Failure(ErrorCode.UNAVAILABLE, null, "this member is shutting down; retry another member");
        }
        boolean api = path.startsWith("/v1/") && !(path.endsWith("/renew") && "POST".equals(ctx.method().name()));
        if (api && !member.rateGuard().tryAdmit()) {
            throw new Failure(ErrorCode.LIMIT_EXCEEDED, null, member.rateGuard().refusal().getMessage());
        }
        if (path.startsWith("/v1/")) {
            Principal principal = principalOf(ctx, path);
            ctx.attribute(PRINCIPAL, principal);
            if (api) {
                try {
                    member.userRates().admit(principal);
                } catch (io.tenure.server.LimitExceeded overQuota) {
                    throw new Failure(ErrorCode.LIMIT_EXCEEDED, null, overQuota.getMessage());
                }
            }
        }
    }

    /**
     * Who the request is, from its {@code Authorization: Bearer} header and its client
     * certificate; 401 when authentication is on and it shows no valid credential, except for
     * authenticating and asking the status (how a client gets a credential and checks it).
     */
    private Principal principalOf(Context ctx, String path) {
        String token = Gate.bearer(ctx.header("Authorization")).orElse(null);
        Object chain = ctx.req().getAttribute("jakarta.servlet.request.X509Certificate");
        java.security.cert.X509Certificate certificate = chain instanceof java.security.cert.X509Certificate[] certs && certs.length > 0
                ? certs[0] : null;
        try {
            return accounts.gate().identify(token, certificate, "http", remote(ctx));
        } catch (Unauthenticated e) {
            if (path.equals("/v1/auth/authenticate") || path.equals("/v1/auth/status") || path.equals(OpenApiDocument.PATH)) {
                return Principal.NOBODY.from(remote(ctx));
            }
            ctx.header("WWW-Authenticate", "Bearer realm=\"tenure\"");
            throw new Failure(ErrorCode.UNAUTHENTICATED, null, e.getMessage());
        }
    }

    private static String remote(Context ctx) {
        return ctx.req().getRemoteAddr() + ":" + ctx.req().getRemotePort();
    }

    private static Principal caller(Context ctx) {
        Principal principal = ctx.attribute(PRINCIPAL);
        return principal == null ? Principal.NOBODY : principal;
    }

    private JsonBody body(Context ctx) throws IOException {
        return JsonBody.parse(JSON, JsonBody.read(ctx.req().getInputStream(), ctx.req().getContentLengthLong(), maxBodyBytes));
    }

    /**
     * Counts the open HTTP connections; a connection opened while {@code maxConnections} others
     * were open is marked, and every request on it is refused.
     */
    private final class OpenConnections implements org.eclipse.jetty.io.Connection.Listener {
        private final java.util.concurrent.atomic.AtomicInteger open = new java.util.concurrent.atomic.AtomicInteger();
        private final java.util.Set<org.eclipse.jetty.io.Connection> overLimit = java.util.concurrent.ConcurrentHashMap.newKeySet();

        @Override
        public void onOpened(org.eclipse.jetty.io.Connection connection) {
            if (open.incrementAndGet() > maxConnections) {
                overLimit.add(connection);
            }
        }

        @Override
        public void onClosed(org.eclipse.jetty.io.Connection connection) {
            open.decrementAndGet();
            overLimit.remove(connection);
        }

        boolean isOverLimit(Context ctx) {
            if (overLimit.isEmpty()) {
                return false;
            }
            org.eclipse.jetty.server.Request request = org.eclipse.jetty.server.Request.getBaseRequest(ctx.req());
            return request != null && overLimit.contains(request.getHttpChannel().getEndPoint().getConnection());
        }
    }

    private void routes() {
        app.before(ctx -> {
            String id = RequestIds.accept(ctx.header(RequestIds.HEADER));
            ctx.attribute(REQUEST_ID, id);
            ctx.header(RequestIds.HEADER, id);
            guard(ctx);
        });
        app.get("/healthz", ctx -> write(ctx, 200, JSON.createObjectNode().put("status", "serving")));
        app.get("/readyz", ctx -> serve(ctx, this::ready));
        app.get("/metrics", ctx -> ctx.contentType(METRICS_CONTENT_TYPE)
                .result(member.metrics().scrape().getBytes(StandardCharsets.UTF_8)));
        app.get(OpenApiDocument.PATH, ctx -> ctx.contentType(JSON_CONTENT_TYPE).result(OpenApiDocument.open()));
        app.get("/v1/status", ctx -> serve(ctx, locks::status));
        app.get("/v1/leases/{id}", ctx -> serve(ctx, () -> locks.lease(caller(ctx), ctx.pathParam("id"))));
        app.get("/v1/locks", ctx -> serve(ctx, () -> locks.list(caller(ctx), ctx.queryParam("prefix"), ctx.queryParam("limit"))));
        app.get("/v1/locks/*", ctx -> serve(ctx, () -> {
            String lock = NamePath.LOCKS.nameOf(ctx.req().getRequestURI());
            return lock.isEmpty() ? locks.list(caller(ctx), ctx.queryParam("prefix"), ctx.queryParam("limit")) : locks.describe(caller(ctx), lock);
        }));
        Map<String, Action> lockActions = new LinkedHashMap<>();
        lockActions.put("acquire", locks::acquire);
        lockActions.put("renew", locks::renew);
        lockActions.put("release", locks::release);
        lockActions.put("downgrade", locks::downgrade);
        app.post("/v1/locks/*", ctx -> serve(ctx, () -> post(ctx, NamePath.LOCKS, lockActions)));
        app.get("/v1/semaphores/*", ctx -> serve(ctx, () -> semaphores.describe(caller(ctx), NamePath.SEMAPHORES.nameOf(ctx.req().getRequestURI()))));
        Map<String, Action> semaphoreActions = new LinkedHashMap<>();
        semaphoreActions.put("acquire", semaphores::acquire);
        semaphoreActions.put("renew", semaphores::renew);
        semaphoreActions.put("release", semaphores::release);
        app.post("/v1/semaphores/*", ctx -> serve(ctx, () -> post(ctx, NamePath.SEMAPHORES, semaphoreActions)));
        // Lock scopes: fixed routes, the scopes in the body (a set has no one name for the path).
        app.post("/v1/scopes/acquire", ctx -> serve(ctx, () -> scopes.acquire(caller(ctx), body(ctx), ctx.attribute(REQUEST_ID))));
        app.post("/v1/scopes/release", ctx -> serve(ctx, () -> scopes.release(caller(ctx), body(ctx), ctx.attribute(REQUEST_ID))));
        app.post("/v1/scopes/renew", ctx -> serve(ctx, () -> scopes.renew(caller(ctx), body(ctx), ctx.attribute(REQUEST_ID))));
        app.post("/v1/scopes/cancel", ctx -> serve(ctx, () -> scopes.cancel(caller(ctx), body(ctx), ctx.attribute(REQUEST_ID))));
        app.post("/v1/scopes/describe", ctx -> serve(ctx, () -> scopes.describe(caller(ctx), body(ctx))));
        app.get("/v1/scopes/describe", ctx -> serve(ctx, () -> scopes.describe(caller(ctx), ctx.queryParamMap())));
        app.get("/v1/elections/*", ctx -> serve(ctx, () -> elections.describe(caller(ctx), NamePath.ELECTIONS.nameOf(ctx.req().getRequestURI()))));
        Map<String, Action> electionActions = new LinkedHashMap<>();
        electionActions.put("campaign", elections::campaign);
        electionActions.put("proclaim", elections::proclaim);
        electionActions.put("renew", elections::renew);
        electionActions.put("resign", elections::resign);
        electionActions.put("cancel", elections::cancel);
        app.post("/v1/elections/*", ctx -> serve(ctx, () -> post(ctx, NamePath.ELECTIONS, electionActions)));
        // The second phase of a two-phase acquire (acquire with enqueue, then wait, or cancel to give the place up), read
        // from the maps per request.
        lockActions.put("wait", locks::await);
        lockActions.put("cancel", locks::cancel);
        semaphoreActions.put("wait", semaphores::await);
        semaphoreActions.put("cancel", semaphores::cancel);
        app.get("/v1/barriers/*", ctx -> serve(ctx, () -> barriers.describe(caller(ctx), NamePath.BARRIERS.nameOf(ctx.req().getRequestURI()))));
        Map<String, Action> barrierActions = new LinkedHashMap<>();
        barrierActions.put("await", barriers::await);
        barrierActions.put("leave", barriers::leave);
        app.post("/v1/barriers/*", ctx -> serve(ctx, () -> post(ctx, NamePath.BARRIERS, barrierActions)));
        // Double barriers: enter (a fresh lease, kept by the party let in), cancel (of an enter still waiting) and leave
        // (with the party's lease), on the lease recipe.
        DoubleBarrierApi doubleBarriers = new DoubleBarrierApi(member, new LeaseRecipe(member, timer), timer);
        Map<String, Action> doubleBarrierActions = new LinkedHashMap<>();
        doubleBarrierActions.put("enter", doubleBarriers::enter);
        doubleBarrierActions.put("leave", doubleBarriers::leave);
        doubleBarrierActions.put("cancel", doubleBarriers::cancel);
        app.get("/v1/double-barriers/*", ctx -> serve(ctx,
                () -> doubleBarriers.describe(caller(ctx), NamePath.DOUBLE_BARRIERS.nameOf(ctx.req().getRequestURI()))));
        app.post("/v1/double-barriers/*", ctx -> serve(ctx, () -> post(ctx, NamePath.DOUBLE_BARRIERS, doubleBarrierActions)));
        app.get("/v1/latches/*", ctx -> serve(ctx, () -> latches.describe(caller(ctx), NamePath.LATCHES.nameOf(ctx.req().getRequestURI()))));
        Map<String, Action> latchActions = new LinkedHashMap<>();
        latchActions.put("count", latches::setCount);
        latchActions.put("count-down", latches::countDown);
        latchActions.put("await", latches::await);
        latchActions.put("cancel", latches::cancel);
        app.post("/v1/latches/*", ctx -> serve(ctx, () -> post(ctx, NamePath.LATCHES, latchActions)));
        CounterApi counters = new CounterApi(member);
        app.get("/v1/counters", ctx -> serve(ctx, () -> counters.list(caller(ctx), ctx.queryParam("prefix"), ctx.queryParam("limit"))));
        app.get("/v1/counters/*", ctx -> serve(ctx, () -> counters.get(caller(ctx), NamePath.COUNTERS.nameOf(ctx.req().getRequestURI()))));
        Map<String, Action> counterActions = new LinkedHashMap<>();
        counterActions.put("add", counters::add);
        counterActions.put("set", counters::set);
        counterActions.put("compare-and-set", counters::compareAndSet);
        app.post("/v1/counters/*", ctx -> serve(ctx, () -> post(ctx, NamePath.COUNTERS, counterActions)));
        KvApi kv = new KvApi(member);
        app.get("/v1/kv", ctx -> serve(ctx, () -> kv.list(caller(ctx), ctx.queryParam("prefix"), ctx.queryParam("after"), ctx.queryParam("limit"))));
        app.get("/v1/kv/*", ctx -> serve(ctx, () -> kv.get(caller(ctx), NamePath.KV.nameOf(ctx.req().getRequestURI()))));
        Map<String, Action> kvActions = new LinkedHashMap<>();
        kvActions.put("put", kv::put);
        kvActions.put("compare-and-set", kv::compareAndSet);
        kvActions.put("delete", kv::delete);
        app.post("/v1/kv/*", ctx -> serve(ctx, () -> post(ctx, NamePath.KV, kvActions)));
        app.get("/v1/signals", ctx -> signals.listen(caller(ctx), ctx));
        Map<String, Action> signalActions = new LinkedHashMap<>();
        signalActions.put("publish", signals::publish);
        app.post("/v1/signals/*", ctx -> serve(ctx, () -> post(ctx, NamePath.SIGNALS, signalActions)));
        ListApi lists = new ListApi(member, timer);
        app.get("/v1/lists/*", ctx -> serve(ctx, () -> {
            NamePath.Target range = NamePath.LISTS.actionOf(ctx.req().getRequestURI());
            return range != null && range.action().equals("range")
                    ? lists.range(caller(ctx), range.name(), ctx.queryParam("start"), ctx.queryParam("stop"))
                    : lists.length(caller(ctx), NamePath.LISTS.nameOf(ctx.req().getRequestURI()));
        }));
        app.post("/v1/lists/*", ctx -> serve(ctx, () -> {
            // A pop may wait: it looks at its own connection to learn whether its client went away.
            Map<String, Action> listActions = new LinkedHashMap<>();
            listActions.put("push", lists::push);
            ClientConnection connection = new ClientConnection(ctx);
            listActions.put("pop", (caller, name, body, requestId) -> lists.pop(caller, name, body, requestId, connection));
            return post(ctx, NamePath.LISTS, listActions);
        }));
        AuthApi auth = new AuthApi(accounts);
        app.post("/v1/auth/authenticate", ctx -> serve(ctx, () -> auth.authenticate(caller(ctx), body(ctx))));
        app.get("/v1/auth/status", ctx -> serve(ctx, () -> auth.status(caller(ctx))));
        app.post("/v1/auth/enable", ctx -> serve(ctx, () -> auth.enable(caller(ctx))));
        app.post("/v1/auth/disable", ctx -> serve(ctx, () -> auth.disable(caller(ctx))));
        app.get("/v1/auth/users", ctx -> serve(ctx, () -> auth.users(caller(ctx))));
        app.post("/v1/auth/users", ctx -> serve(ctx, () -> auth.addUser(caller(ctx), body(ctx))));
        app.delete("/v1/auth/users/{name}", ctx -> serve(ctx, () -> auth.deleteUser(caller(ctx), ctx.pathParam("name"))));
        app.post("/v1/auth/users/{name}/password", ctx -> serve(ctx,
                () -> auth.changePassword(caller(ctx), ctx.pathParam("name"), body(ctx))));
        app.post("/v1/auth/users/{name}/roles", ctx -> serve(ctx, () -> auth.grantRole(caller(ctx), ctx.pathParam("name"), body(ctx))));
        app.delete("/v1/auth/users/{name}/roles/{role}", ctx -> serve(ctx,
                () -> auth.revokeRole(caller(ctx), ctx.pathParam("name"), ctx.pathParam("role"))));
        app.get("/v1/auth/roles", ctx -> serve(ctx, () -> auth.roles(caller(ctx))));
        app.post("/v1/auth/roles", ctx -> serve(ctx, () -> auth.addRole(caller(ctx), body(ctx))));
        app.delete("/v1/auth/roles/{name}", ctx -> serve(ctx, () -> auth.deleteRole(caller(ctx), ctx.pathParam("name"))));
        app.post("/v1/auth/roles/{name}/permissions", ctx -> serve(ctx,
                () -> auth.grantPermission(caller(ctx), ctx.pathParam("name"), body(ctx))));
        app.delete("/v1/auth/roles/{name}/permissions", ctx -> serve(ctx, () -> auth.revokePermission(caller(ctx),
                ctx.pathParam("name"), ctx.queryParam("kind"), ctx.queryParam("prefix"))));
        // The live dashboard: its page (public, no data) and its data (a snapshot, and a pushed stream of them).
        DashboardApi dashboard = new DashboardApi(member, member.permissions(), timer, sseWriters);
        DashboardPage page = DashboardPage.load();
        app.get("/v1/dashboard", ctx -> serve(ctx, () -> dashboard.snapshot(caller(ctx), ctx.queryParam("prefix"))));
        app.get("/v1/dashboard/events", ctx -> dashboard.stream(caller(ctx), ctx));
        app.get("/ui", page::serve);
        app.get("/ui/*", page::serve);
        // Not under /v1/kv/, where "txn" would be a key.
        app.post("/v1/txn", ctx -> serve(ctx, () -> kv.txn(caller(ctx), JsonBody.parse(JSON,
                JsonBody.read(ctx.req().getInputStream(), ctx.req().getContentLengthLong(), maxBodyBytes)))));
        app.exception(Failure.class, (failure, ctx) -> render(ctx, failure));
        app.exception(HttpResponseException.class, (e, ctx) -> render(ctx, fromJavalin(ctx, e)));
        app.exception(Exception.class, (e, ctx) -> render(ctx, Failures.of(e)));
    }

    /** One POST action on a named grant: the name from the path, the parsed body, the request id. */
    private interface Action {
        CompletableFuture<Answer> call(Principal caller, String name, JsonBody body, String requestId);
    }

    /**
     * A POST under {@code path}: {@code {name}/{action}}, the action one of {@code actions} (named
     * in their order when the path has another).
     */
    private CompletableFuture<Answer> post(Context ctx, NamePath path, Map<String, Action> actions) throws IOException {
        NamePath.Target target = path.actionOf(ctx.req().getRequestURI());
        String action = target == null ? "" : target.action();
        Action call = actions.get(action);
        if (call == null) {
            List<String> names = List.copyOf(actions.keySet());
            String last = names.get(names.size() - 1);
            throw new Failure(ErrorCode.UNKNOWN_ROUTE, null, "no endpoint POST " + ctx.req().getRequestURI() + "; the " + path.noun()
                    + (names.size() == 1 ? " endpoint is POST " + path.prefix() + "{" + path.noun() + "}/" + last
                    : " endpoints are POST " + path.prefix() + "{" + path.noun() + "}/"
                    + String.join(", /", names.subList(0, names.size() - 1)) + " and /" + last));
        }
        try {
            byte[] bytes = JsonBody.read(ctx.req().getInputStream(), ctx.req().getContentLengthLong(), maxBodyBytes);
            return call.call(caller(ctx), target.name(), JsonBody.parse(JSON, bytes), ctx.attribute(REQUEST_ID));
        } catch (Failure refused) {
            // Refused here, before the lock service saw it (a body that is not JSON, a field
            // missing or out of range): counted as the service counts the input it refuses.
            // The lock_* counters count locks; semaphores and elections have their latency only.
            if (path == NamePath.LOCKS) {
                switch (action) {
                    case "acquire" -> member.metrics().acquire("rejected");
                    case "renew" -> member.metrics().renew("rejected");
                    case "release" -> member.metrics().release("rejected");
                    default -> {
                        // A downgrade has no counter of its own.
                    }
                }
            }
            throw refused;
        }
    }

    /**
     * Ready when not draining, a leader is known, and this member has applied everything the
     * leader had committed when asked (a read barrier through the log, within {@link #READY_TIMEOUT_MS}):
     * a member cut off from the leader, or far behind it, is not ready although it may remember one.
     */
    private CompletableFuture<Answer> ready() {
        if (member.draining()) {
            return CompletableFuture.completedFuture(new Answer(503, JSON.createObjectNode().put("status", "draining")
                    .put("reason", "the member is shutting down; send new work to another member")));
        }
        if (!member.logOpen()) {
            return CompletableFuture.completedFuture(new Answer(503, JSON.createObjectNode().put("status", "starting")
                    .put("reason", "the member is loading its snapshot and log")));
        }
        StatusResponse before = member.status(ResponseHeader.getDefaultInstance());
        if (before.getLeader().isEmpty()) {
            return CompletableFuture.completedFuture(new Answer(503, readiness("no_leader", before)
                    .put("reason", "this member knows no leader (an election is under way, or no majority is reachable)")));
        }
        return member.readBarrier().orTimeout(READY_TIMEOUT_MS, TimeUnit.MILLISECONDS).handle((ignored, error) -> {
            StatusResponse now = member.status(ResponseHeader.getDefaultInstance());
            if (error != null) {
                return new Answer(503, readiness("catching_up", now).put("reason", "this member has not applied what the"
                        + " leader committed within " + READY_TIMEOUT_MS + " ms: " + Causes.unwrap(error)));
            }
            return new Answer(200, readiness("ready", now));
        });
    }

    private static ObjectNode readiness(String status, StatusResponse s) {
        return JSON.createObjectNode()
                .put("status", status)
                .put("leader", s.getLeader().isEmpty() ? null : s.getLeader())
                .put("term", s.getRaftTerm())
                .put("applied_index", s.getAppliedIndex())
                .put("commit_index", s.getCommitIndex());
    }

    /** Runs a handler with the request id in the MDC, and answers with its result or its failure. */
    private void serve(Context ctx, ThrowingSupplier handler) {
        String requestId = ctx.attribute(REQUEST_ID);
        CompletableFuture<Answer> answer;
        try {
            answer = RequestIds.traced(requestId, handler);
        } catch (RuntimeException e) {
            answer = CompletableFuture.failedFuture(e);
        }
        CompletableFuture<Answer> settled = answer;
        ctx.future(() -> settled.handle((a, error) -> {
            if (error != null) {
                render(ctx, Failures.of(error));
            } else {
                write(ctx, a.status(), a.body());
            }
            return null;
        }));
    }

    /** A handler whose synchronous part may fail on reading the body. */
    private interface ThrowingSupplier extends Supplier<CompletableFuture<Answer>> {
        CompletableFuture<Answer> call() throws IOException;

        @Override
        default CompletableFuture<Answer> get() {
            try {
                return call();
            } catch (IOException e) {
                throw new Failure(ErrorCode.INVALID_JSON, null, "the request body could not be read: " + e.getMessage());
            }
        }
    }

    private static Failure fromJavalin(Context ctx, HttpResponseException e) {
        String route = ctx.method() + " " + ctx.req().getRequestURI();
        return switch (e.getStatus()) {
            case 404 -> new Failure(ErrorCode.UNKNOWN_ROUTE, null, "no endpoint " + route);
            case 405 -> {
                String allowed = e.getDetails().getOrDefault("availableMethods", "");
                if (!allowed.isEmpty()) {
                    ctx.header("Allow", allowed);
                }
                yield new Failure(ErrorCode.METHOD_NOT_ALLOWED, null, ctx.method() + " is not allowed on "
                        + ctx.req().getRequestURI() + (allowed.isEmpty() ? "" : "; allowed: " + allowed));
            }
            case 413 -> new Failure(ErrorCode.PAYLOAD_TOO_LARGE, null, "the request body is over this member's limit");
            case 400 -> new Failure(ErrorCode.INVALID_ARGUMENT, null, e.getMessage());
            case 503 -> new Failure(ErrorCode.UNAVAILABLE, null, e.getMessage());
            default -> new Failure(ErrorCode.INTERNAL, null, e.getStatus() + " " + e.getMessage());
        };
    }

    private static void render(Context ctx, Failure failure) {
        ObjectNode body = failure.body(JSON);
        if (failure.code == ErrorCode.UNAVAILABLE) {
            ctx.header("Retry-After", RETRY_AFTER_SECONDS);
        }
        if (failure.extra.get("retry_after_ms") instanceof Long hint) {
            ctx.header("Retry-After", Long.toString(Math.max(1, (hint + 999) / 1000)));
        }
        if (failure.code == ErrorCode.INTERNAL) {
            LOG.warn("event=http_internal_error method={} path=\"{}\" request_id={} reason=\"{}\"", ctx.method(),
                    ctx.req().getRequestURI(), ctx.attribute(REQUEST_ID), failure.getMessage());
        }
        write(ctx, failure.code.status, body);
    }

    private static void write(Context ctx, int status, ObjectNode body) {
        byte[] bytes;
        try {
            bytes = JSON.writeValueAsBytes(body);
        } catch (IOException e) {
            throw new IllegalStateException("a JSON tree always serializes", e);
        }
        ctx.status(status).contentType(JSON_CONTENT_TYPE).result(bytes);
    }

    /** Jetty's answer to a request it refuses before routing (a malformed path, say): the JSON error body, not HTML. */
    private static final class JsonBadMessages extends ErrorHandler {
        @Override
        public ByteBuffer badMessageError(int status, String reason, HttpFields.Mutable fields) {
            Failure failure = Failures.ofBadMessage(status, reason == null ? "HTTP " + status : reason);
            ObjectNode body = JSON.createObjectNode().put("error", failure.code.wire).put("message", failure.getMessage());
            fields.put(HttpHeader.CONTENT_TYPE, JSON_CONTENT_TYPE);
            try {
                return ByteBuffer.wrap(JSON.writeValueAsBytes(body));
            } catch (IOException e) {
                throw new IllegalStateException("a JSON tree always serializes", e);
            }
        }
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, name + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
