package io.tenure.server.http;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import io.tenure.server.http.HttpMember.Reply;
import io.tenure.testing.TenureExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.net.http.HttpRequest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.tenure.server.http.HttpMember.body;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The OpenAPI document at {@code /v1/openapi.json} against the member that serves it: every route
 * the HTTP front registers is documented and every documented route is served (both ways, each
 * route named), the standard parser finds nothing wrong with it, and real answers carry the
 * statuses and fields it declares.
 *
 * <p>The routes served are read from Javalin's router ({@link HttpFront#servedRoutes}). A wildcard
 * POST route ({@code POST /v1/locks/*}) dispatches on the action in the last segment: its actions
 * are asked of the member itself, by a POST with an action it does not have, whose 404 names the
 * actions of the table the request reached ({@code HttpFront.post}). A wildcard GET reads the
 * name ({@code GET /v1/locks/{lock}}), with the one exception of {@link #GET_ACTIONS}.
 */
class OpenApiContractTest {
    @RegisterExtension
    static final TenureExtension tenure = TenureExtension.members(1);
    static final HttpMember member = HttpMember.of(tenure::cluster);

    /** Wildcard GET routes that also read an action after the name: the lists' {@code /range} (HttpFront's GET /v1/lists/*). */
    private static final Map<String, List<String>> GET_ACTIONS = Map.of("/v1/lists/", List.of("range"));
    private static final List<String> METHODS = List.of("get", "put", "post", "delete", "patch", "head", "options", "trace");
    /** The 404 of a POST with an unknown action: "the lock endpoints are POST /v1/locks/{lock}/acquire, /renew ... and /cancel". */
    private static final Pattern ACTIONS = Pattern.compile("the \\S+ endpoints? (?:is|are) POST (\\S+)\\{(\\w+)\\}/(.+)$");

    @TempDir
    Path dir;

    @Test
    void theDocumentIsServedAsJsonAndTheStandardParserFindsNothingWrong() {
        Reply served = member.get(OpenApiDocument.PATH);

        assertThat(served.status()).as(served.toString()).isEqualTo(200);
        assertThat(served.header("Content-Type")).startsWith("application/json");
        assertThat(served.header("X-Request-Id")).isNotBlank();
        SwaggerParseResult parsed = parse(served.body());
        assertThat(parsed.getMessages()).as("the parser's messages").isEmpty();
        assertThat(parsed.getOpenAPI().getOpenapi()).isEqualTo("3.1.0");
        assertThat(parsed.getOpenAPI().getPaths()).containsKeys("/v1/locks/{lock}/acquire", "/healthz", OpenApiDocument.PATH);
        assertThat(parsed.getOpenAPI().getComponents().getSecuritySchemes()).containsKey("bearer");
    }

    /** The parser is no formality on a 3.1 document: a reference to nothing and a response without its description are found. */
    @Test
    void theStandardParserRefusesABrokenCopyOfTheDocument() {
        ObjectNode broken = (ObjectNode) member.get(OpenApiDocument.PATH).json();
        ObjectNode acquire = (ObjectNode) broken.at("/paths/~1v1~1locks~1{lock}~1acquire/post/responses");
        ((ObjectNode) acquire.get("200")).remove("description");
        ((ObjectNode) acquire.get("202").at("/content/application~1json/schema")).put("$ref", "#/components/schemas/NoSuchSchema");

        List<String> messages = parse(broken.toString()).getMessages();

        assertThat(messages).anySatisfy(m -> assertThat(m).contains("description"));
        assertThat(messages).anySatisfy(m -> assertThat(m).contains("NoSuchSchema"));
    }

    @Test
    void everyRouteServedIsDocumentedAndEveryDocumentedRouteIsServed() {
        Set<String> served = served();
        Set<String> documented = documented(member.get(OpenApiDocument.PATH).json());

        assertThat(differences(served, documented)).as("served routes against /v1/openapi.json").isEmpty();
        // Sanity: the expansion reached the actions and the routes with a path parameter.
        assertThat(served).contains("POST /v1/locks/{lock}/acquire", "POST /v1/latches/{latch}/count-down",
                "GET /v1/lists/{list}/range", "DELETE /v1/auth/users/{name}/roles/{role}", "GET " + OpenApiDocument.PATH);
    }

    /** The check fails on a document that lost a path, and on one that gained a path nobody serves, naming it. */
    @Test
    void aPathMissingFromTheDocumentOrOneNotServedIsNamed() {
        Set<String> served = served();
        ObjectNode document = (ObjectNode) member.get(OpenApiDocument.PATH).json();
        ObjectNode paths = (ObjectNode) document.get("paths");
        paths.remove("/v1/semaphores/{semaphore}/renew");
        paths.set("/v1/locks/{lock}/steal", paths.get("/v1/locks/{lock}/release"));

        assertThat(differences(served, documented(document))).containsExactlyInAnyOrder(
                "served but not documented: POST /v1/semaphores/{semaphore}/renew",
                "documented but not served: POST /v1/locks/{lock}/steal");
    }

    @Test
    void realAnswersHaveTheStatusesAndFieldsTheDocumentDeclares() {
        JsonNode document = member.get(OpenApiDocument.PATH).json();
        List<String> problems = new ArrayList<>();
        Reply grant = member.post("/v1/locks/openapi%2Fanswers/acquire", body("owner_id", "writer", "ttl_ms", 10_000, "metadata", "m"));
        check(document, problems, "post", "/v1/locks/{lock}/acquire", grant);
        check(document, problems, "post", "/v1/locks/{lock}/acquire",
                member.post("/v1/locks/openapi%2Fanswers/acquire", body("owner_id", "reader", "ttl_ms", 10_000, "mode", "read")));
        check(document, problems, "post", "/v1/locks/{lock}/acquire", member.post("/v1/locks/x/acquire", body("owner_id", "w", "ttl_ms", "10s")));
        check(document, problems, "get", "/v1/locks/{lock}", member.get("/v1/locks/openapi%2Fanswers"));
        check(document, problems, "get", "/v1/locks", member.get("/v1/locks?prefix=openapi"));
        assertThat(grant.status()).as(grant.toString()).isEqualTo(200);
        check(document, problems, "get", "/v1/leases/{id}", member.get("/v1/leases/" + grant.json().get("lease_id").asLong()));
        check(document, problems, "post", "/v1/locks/{lock}/renew", member.post("/v1/locks/openapi%2Fanswers/renew", claim(grant)));
        check(document, problems, "post", "/v1/locks/{lock}/release", member.post("/v1/locks/openapi%2Fanswers/release", claim(grant)));
        check(document, problems, "get", "/v1/locks/{lock}", member.get("/v1/locks/openapi%2Fanswers"));
        check(document, problems, "post", "/v1/semaphores/{semaphore}/acquire",
                member.post("/v1/semaphores/openapi-semaphores/acquire", body("owner_id", "w", "ttl_ms", 10_000, "limit", 2)));
        check(document, problems, "get", "/v1/semaphores/{semaphore}", member.get("/v1/semaphores/openapi-semaphores"));
        check(document, problems, "post", "/v1/counters/{counter}/add", member.post("/v1/counters/openapi-counters/add", body("delta", 2)));
        check(document, problems, "post", "/v1/kv/{key}/put", member.post("/v1/kv/openapi-kv/put", body("value", "v")));
        check(document, problems, "get", "/v1/kv/{key}", member.get("/v1/kv/openapi-kv"));
        check(document, problems, "get", "/v1/lists/{list}/range", member.get("/v1/lists/openapi-lists/range"));
        check(document, problems, "get", "/v1/status", member.get("/v1/status"));
        check(document, problems, "get", "/healthz", member.get("/healthz"));
        check(document, problems, "get", "/readyz", member.get("/readyz"));
        check(document, problems, "get", "/v1/auth/status", member.get("/v1/auth/status"));

        assertThat(problems).isEmpty();
    }

    @Test
    void realAnswersOfTheOtherPrimitivesHaveTheStatusesAndFieldsTheDocumentDeclares() {
        JsonNode document = member.get(OpenApiDocument.PATH).json();
        List<String> problems = new ArrayList<>();
        Reply queued = member.post("/v1/locks/openapi%2Ftwo-phase/acquire", body("owner_id", "first", "ttl_ms", 10_000, "enqueue", true));
        Reply second = member.post("/v1/locks/openapi%2Ftwo-phase/acquire", body("owner_id", "second", "ttl_ms", 10_000, "enqueue", true));
        check(document, problems, "post", "/v1/locks/{lock}/acquire", queued);
        check(document, problems, "post", "/v1/locks/{lock}/acquire", second);
        assertThat(second.status()).as(second.toString()).isEqualTo(202);
        String waiting = body("owner_id", "second", "lease_id", second.json().get("lease_id").asLong());
        check(document, problems, "post", "/v1/locks/{lock}/wait", member.post("/v1/locks/openapi%2Ftwo-phase/wait", waiting));
        check(document, problems, "post", "/v1/locks/{lock}/cancel", member.post("/v1/locks/openapi%2Ftwo-phase/cancel", waiting));
        check(document, problems, "post", "/v1/locks/{lock}/downgrade", member.post("/v1/locks/openapi%2Ftwo-phase/downgrade", claim(queued)));
        check(document, problems, "get", "/v1/locks/{lock}", member.get("/v1/locks/openapi%2Fnobody"));

        Reply leader = member.post("/v1/elections/openapi-elections/campaign", body("owner_id", "w", "ttl_ms", 10_000, "value", "10.0.0.1"));
        check(document, problems, "post", "/v1/elections/{election}/campaign", leader);
        check(document, problems, "post", "/v1/elections/{election}/campaign",
                member.post("/v1/elections/openapi-elections/campaign", body("owner_id", "v", "ttl_ms", 10_000, "value", "10.0.0.2")));
        check(document, problems, "get", "/v1/elections/{election}", member.get("/v1/elections/openapi-elections"));
        String leads = claim(leader);
        check(document, problems, "post", "/v1/elections/{election}/renew", member.post("/v1/elections/openapi-elections/renew", leads));
        check(document, problems, "post", "/v1/elections/{election}/resign", member.post("/v1/elections/openapi-elections/resign", leads));

        check(document, problems, "post", "/v1/barriers/{barrier}/await",
                member.post("/v1/barriers/openapi-barriers/await", body("owner_id", "w", "ttl_ms", 10_000, "parties", 1)));
        check(document, problems, "post", "/v1/barriers/{barrier}/await",
                member.post("/v1/barriers/openapi-barriers/await", body("owner_id", "w", "ttl_ms", 10_000, "parties", 2)));
        Reply inside = member.post("/v1/double-barriers/openapi-double-barriers/enter", body("owner_id", "w", "ttl_ms", 10_000, "parties", 1));
        check(document, problems, "post", "/v1/double-barriers/{double_barrier}/enter", inside);
        assertThat(inside.status()).as(inside.toString()).isEqualTo(200);
        check(document, problems, "get", "/v1/double-barriers/{double_barrier}", member.get("/v1/double-barriers/openapi-double-barriers"));
        check(document, problems, "post", "/v1/double-barriers/{double_barrier}/leave",
                member.post("/v1/double-barriers/openapi-double-barriers/leave", body("owner_id", "w", "lease_id", inside.json().get("lease_id").asLong())));

        check(document, problems, "post", "/v1/latches/{latch}/count", member.post("/v1/latches/openapi-latches/count", body("count", 1)));
        check(document, problems, "get", "/v1/latches/{latch}", member.get("/v1/latches/openapi-latches"));
        check(document, problems, "post", "/v1/latches/{latch}/await",
                member.post("/v1/latches/openapi-latches/await", body("owner_id", "w", "ttl_ms", 10_000)));
        check(document, problems, "post", "/v1/latches/{latch}/count-down", member.post("/v1/latches/openapi-latches/count-down", "{}"));
        check(document, problems, "post", "/v1/latches/{latch}/await",
                member.post("/v1/latches/openapi-latches/await", body("owner_id", "w", "ttl_ms", 10_000)));

        Reply scopes = member.post("/v1/scopes/acquire", "{\"scopes\": [{\"path\": \"/openapi\"}, {\"range\": {\"inode\": 7, \"start\": 0,"
                + " \"end\": 10}, \"mode\": \"shared\"}], \"owner_id\": \"w\", \"ttl_ms\": 10000}");
        check(document, problems, "post", "/v1/scopes/acquire", scopes);
        check(document, problems, "post", "/v1/scopes/acquire",
                member.post("/v1/scopes/acquire", "{\"scopes\": [{\"path\": \"/openapi\"}], \"owner_id\": \"v\", \"ttl_ms\": 10000}"));
        check(document, problems, "get", "/v1/scopes/describe", member.get("/v1/scopes/describe?path=/openapi"));
        check(document, problems, "post", "/v1/scopes/release", member.post("/v1/scopes/release", claim(scopes)));

        check(document, problems, "post", "/v1/counters/{counter}/compare-and-set",
                member.post("/v1/counters/openapi-counters/compare-and-set", body("expected", 5, "value", 6)));
        check(document, problems, "get", "/v1/counters", member.get("/v1/counters?prefix=open"));
        check(document, problems, "get", "/v1/counters/{counter}", member.get("/v1/counters/openapi-none"));
        check(document, problems, "post", "/v1/kv/{key}/compare-and-set",
                member.post("/v1/kv/openapi%2Fcas/compare-and-set", body("value_base64", "/w==", "expected_mod_revision", 0)));
        check(document, problems, "get", "/v1/kv", member.get("/v1/kv?prefix=openapi"));
        check(document, problems, "post", "/v1/kv/{key}/delete", member.post("/v1/kv/openapi%2Fcas/delete", "{}"));
        check(document, problems, "post", "/v1/counters/{counter}/set", member.post("/v1/counters/openapi-txn/set", body("value", 1)));
        check(document, problems, "post", "/v1/txn", member.post("/v1/txn", "{\"compare\": [{\"kind\": \"counter\", \"key\": \"openapi-txn\","
                + " \"target\": \"value\", \"result\": \"greater\", \"value\": 0}], \"success\": [{\"add\": {\"counter\": \"openapi-txn\"}},"
                + " {\"put\": {\"key\": \"openapi/txn\", \"value\": \"v\"}}, {\"delete\": {\"key\": \"openapi/txn\"}}]}"));
        check(document, problems, "post", "/v1/lists/{list}/push", member.post("/v1/lists/openapi-lists/push", body("value", "item")));
        check(document, problems, "get", "/v1/lists/{list}", member.get("/v1/lists/openapi-lists"));
        check(document, problems, "post", "/v1/lists/{list}/pop", member.post("/v1/lists/openapi-lists/pop", "{}"));
        check(document, problems, "post", "/v1/lists/{list}/pop", member.post("/v1/lists/openapi-lists/pop", "{}"));
        check(document, problems, "post", "/v1/signals/{channel}/publish", member.post("/v1/signals/openapi-signals/publish", body("payload", "p")));
        check(document, problems, "get", "/v1/auth/users", member.get("/v1/auth/users"));
        check(document, problems, "get", "/v1/auth/roles", member.get("/v1/auth/roles"));
        // The dashboard's snapshot, with a held lock and its waiter, a semaphore, an election and a latch among its rows.
        check(document, problems, "get", "/v1/dashboard", member.get("/v1/dashboard?prefix=openapi"));

        assertThat(problems).isEmpty();
    }

    /** The answer check is no formality: an undocumented status, a field not declared, one missing, one of another type are named. */
    @Test
    void theAnswerCheckNamesWhatTheDocumentDoesNotDeclare() {
        JsonNode document = member.get(OpenApiDocument.PATH).json();
        ObjectNode grant = (ObjectNode) member.post("/v1/locks/openapi%2Fcheck/acquire", body("owner_id", "w", "ttl_ms", 10_000)).json();
        grant.remove("fencing_token");
        grant.put("lease_id", "not a number");
        grant.put("holder", "w");
        List<String> problems = new ArrayList<>();

        check(document, problems, "post", "/v1/locks/{lock}/acquire", 200, grant);
        check(document, problems, "get", "/healthz", 418, member.get("/healthz").json());

        assertThat(problems).containsExactlyInAnyOrder(
                "POST /v1/locks/{lock}/acquire 200 $: required field fencing_token is missing",
                "POST /v1/locks/{lock}/acquire 200 $.lease_id: \"not a number\" is not of type \"integer\"",
                "POST /v1/locks/{lock}/acquire 200 $: field holder is not declared",
                "GET /healthz 418: the status is not documented ({\"status\":\"serving\"})");
    }

    /** Like /healthz, the document needs no credential while authentication is on, and the rest of /v1 still does. */
    @Test
    void theDocumentIsReadableWithoutACredentialWhileAuthenticationIsOn() {
        try (HttpMember secured = HttpMember.start(dir)) {
            assertThat(secured.post("/v1/auth/users", body("name", "admin", "password", "correct horse")).status()).isEqualTo(200);
            assertThat(secured.post("/v1/auth/users/admin/roles", body("role", "root")).status()).isEqualTo(200);
            Reply enabled = secured.post("/v1/auth/enable", "{}");
            assertThat(enabled.status()).as(enabled.toString()).isEqualTo(200);

            Reply document = secured.get(OpenApiDocument.PATH);
            Reply locks = secured.get("/v1/locks");

            assertThat(document.status()).as(document.toString()).isEqualTo(200);
            assertThat(document.json().get("openapi").asText()).isEqualTo("3.1.0");
            assertThat(locks.status()).isEqualTo(401);
            assertThat(locks.header("WWW-Authenticate")).startsWith("Bearer");
        }
    }

    // ---- served and documented routes -------------------------------------------------------------

    /** Every route the member serves, as "METHOD /path/{param}", wildcards expanded; the dashboard's static /ui files left out. */
    private static Set<String> served() {
        List<String> routes = member.server().httpFront().servedRoutes().stream()
                .filter(route -> !route.endsWith(" /ui") && !route.contains(" /ui/"))
                .toList();
        Map<String, String> nouns = new LinkedHashMap<>();
        Set<String> served = new TreeSet<>();
        for (String route : routes) {
            String method = route.substring(0, route.indexOf(' '));
            String path = route.substring(route.indexOf(' ') + 1);
            if (method.equals("POST") && path.endsWith("/*")) {
                String prefix = path.substring(0, path.length() - 1);
                Matcher m = actionsOf(prefix);
                nouns.put(prefix, m.group(2));
                for (String action : m.group(3).split(", /| and /")) {
                    served.add("POST " + prefix + "{" + m.group(2) + "}/" + action);
                }
            } else if (!path.endsWith("/*")) {
                served.add(method + " " + path);
            }
        }
        for (String route : routes) {
            if (!route.endsWith("/*")) {
                continue;
            }
            String prefix = route.substring(route.indexOf(' ') + 1, route.length() - 1);
            if (route.startsWith("GET ")) {
                String noun = nouns.get(prefix);
                assertThat(noun).as("the name parameter of " + route + ", from the POST route of the same prefix").isNotNull();
                served.add("GET " + prefix + "{" + noun + "}");
                for (String action : GET_ACTIONS.getOrDefault(prefix, List.of())) {
                    assertReadsAction(prefix, action);
                    served.add("GET " + prefix + "{" + noun + "}/" + action);
                }
            } else {
                assertThat(route).as("a wildcard route this test knows how to expand").startsWith("POST ");
            }
        }
        return served;
    }

    /** Asks the member which actions the POST route under {@code prefix} has: its 404 for an action it lacks names them. */
    private static Matcher actionsOf(String prefix) {
        Reply refused = member.post(prefix + "openapi-probe/no-such-action", "{}");
        assertThat(refused.status()).as(refused.toString()).isEqualTo(404);
        assertThat(refused.json().get("error").asText()).isEqualTo("unknown_route");
        String message = refused.json().get("message").asText();
        Matcher m = ACTIONS.matcher(message);
        assertThat(m.find()).as("the actions named in: " + message).isTrue();
        assertThat(m.group(1)).as("the prefix named in: " + message).isEqualTo(prefix);
        return m;
    }

    /** A GET action is real when the path with it is read otherwise than the name with an encoded slash before it. */
    private static void assertReadsAction(String prefix, String action) {
        Reply withAction = member.get(prefix + "openapi-probe/" + action);
        Reply asName = member.get(prefix + "openapi-probe%2F" + action);
        assertThat(withAction.status()).as(withAction.toString()).isEqualTo(200);
        assertThat(fieldsOf(withAction.json())).as("GET " + prefix + "{name}/" + action + " is answered as its own route")
                .isNotEqualTo(fieldsOf(asName.json()));
    }

    private static Set<String> fieldsOf(JsonNode json) {
        Set<String> fields = new TreeSet<>();
        json.fieldNames().forEachRemaining(fields::add);
        return fields;
    }

    /** Every operation of the document, as "METHOD /path/{param}". */
    private static Set<String> documented(JsonNode document) {
        Set<String> documented = new TreeSet<>();
        document.get("paths").fields().forEachRemaining(path -> {
            for (String method : METHODS) {
                if (path.getValue().has(method)) {
                    documented.add(method.toUpperCase(Locale.ROOT) + " " + path.getKey());
                }
            }
        });
        return documented;
    }

    /** Both ways, each route named. */
    private static List<String> differences(Set<String> served, Set<String> documented) {
        List<String> differences = new ArrayList<>();
        for (String route : served) {
            if (!documented.contains(route)) {
                differences.add("served but not documented: " + route);
            }
        }
        for (String route : documented) {
            if (!served.contains(route)) {
                differences.add("documented but not served: " + route);
            }
        }
        return differences;
    }

    // ---- answers against the document's schemas ------------------------------------------------

    /** The owner, lease and token of a grant, as renew and release take them; the grant asserted first. */
    private static String claim(Reply grant) {
        assertThat(grant.status()).as(grant.toString()).isEqualTo(200);
        JsonNode g = grant.json();
        return body("owner_id", g.get("owner_id").asText(), "lease_id", g.get("lease_id").asLong(),
                "fencing_token", g.get("fencing_token").asLong());
    }

    /**
     * Adds to {@code problems} what in {@code answer} the document does not declare for the
     * operation: a status it does not list, a field its schema does not name, a required field
     * missing, a value of another type or outside an enum.
     */
    private static void check(JsonNode document, List<String> problems, String method, String path, Reply answer) {
        check(document, problems, method, path, answer.status(), answer.json());
    }

    private static void check(JsonNode document, List<String> problems, String method, String path, int status, JsonNode answer) {
        String operation = method.toUpperCase(Locale.ROOT) + " " + path + " " + status;
        JsonNode response = resolve(document, document.get("paths").path(path).path(method).path("responses").path(String.valueOf(status)));
        if (response.isMissingNode()) {
            problems.add(operation + ": the status is not documented (" + answer + ")");
            return;
        }
        JsonNode schema = response.at("/content/application~1json/schema");
        if (schema.isMissingNode()) {
            problems.add(operation + ": no JSON schema for the answer");
            return;
        }
        mismatches(document, answer, schema, operation + " $", problems);
    }

    private static void mismatches(JsonNode document, JsonNode value, JsonNode schemaOrRef, String at, List<String> problems) {
        JsonNode schema = resolve(document, schemaOrRef);
        if (schema.has("anyOf")) {
            List<String> first = null;
            for (JsonNode choice : schema.get("anyOf")) {
                List<String> these = new ArrayList<>();
                mismatches(document, value, choice, at, these);
                if (these.isEmpty()) {
                    return;
                }
                first = first == null ? these : first;
            }
            problems.add(at + ": matches none of anyOf, the first because " + first);
            return;
        }
        if (schema.has("allOf")) {
            schema = merged(document, schema);
        }
        if (schema.has("type") && !typeMatches(schema.get("type"), value)) {
            problems.add(at + ": " + value + " is not of type " + schema.get("type"));
            return;
        }
        if (schema.has("enum") && !contains(schema.get("enum"), value)) {
            problems.add(at + ": " + value + " is not one of " + schema.get("enum"));
        }
        if (value.isObject()) {
            JsonNode properties = schema.path("properties");
            for (JsonNode required : schema.path("required")) {
                if (!value.has(required.asText())) {
                    problems.add(at + ": required field " + required.asText() + " is missing");
                }
            }
            Iterator<Map.Entry<String, JsonNode>> fields = value.fields();
            while (fields.hasNext()) {
                Map.Entry<String, JsonNode> field = fields.next();
                if (properties.has(field.getKey())) {
                    mismatches(document, field.getValue(), properties.get(field.getKey()), at + "." + field.getKey(), problems);
                } else if (!schema.path("additionalProperties").asBoolean(false)) {
                    problems.add(at + ": field " + field.getKey() + " is not declared");
                }
            }
        } else if (value.isArray() && schema.has("items")) {
            for (int i = 0; i < value.size(); i++) {
                mismatches(document, value.get(i), schema.get("items"), at + "[" + i + "]", problems);
            }
        }
    }

    /** An allOf of object schemas as one: their properties and required fields together. */
    private static JsonNode merged(JsonNode document, JsonNode schema) {
        ObjectNode merged = HttpMember.JSON.createObjectNode().put("type", "object");
        ObjectNode properties = merged.putObject("properties");
        var required = merged.putArray("required");
        for (JsonNode part : schema.get("allOf")) {
            JsonNode p = resolve(document, part);
            p.path("properties").fields().forEachRemaining(f -> properties.set(f.getKey(), f.getValue()));
            p.path("required").forEach(required::add);
        }
        return merged;
    }

    private static boolean typeMatches(JsonNode type, JsonNode value) {
        if (type.isArray()) {
            for (JsonNode t : type) {
                if (typeMatches(t, value)) {
                    return true;
                }
            }
            return false;
        }
        return switch (type.asText()) {
            case "null" -> value.isNull();
            case "boolean" -> value.isBoolean();
            case "integer" -> value.isIntegralNumber();
            case "number" -> value.isNumber();
            case "string" -> value.isTextual();
            case "array" -> value.isArray();
            case "object" -> value.isObject();
            default -> false;
        };
    }

    private static boolean contains(JsonNode values, JsonNode value) {
        for (JsonNode v : values) {
            if (v.equals(value)) {
                return true;
            }
        }
        return false;
    }

    /** Follows a local {@code $ref} ("#/components/schemas/Lock"), repeatedly. */
    private static JsonNode resolve(JsonNode document, JsonNode node) {
        while (node.has("$ref")) {
            node = document.at(node.get("$ref").asText().substring(1));
        }
        return node;
    }

    private static SwaggerParseResult parse(String json) {
        ParseOptions options = new ParseOptions();
        options.setResolve(true);
        return new OpenAPIV3Parser().readContents(json, null, options);
    }
}
