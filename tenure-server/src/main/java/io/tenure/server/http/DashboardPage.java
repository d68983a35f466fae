package io.tenure.server.http;

import io.javalin.http.Context;

import java.io.IOException;
import java.io.InputStream;
import java.util.Map;

/**
 * The dashboard's page at {@code /ui}: three hand-written files (HTML, CSS, JavaScript) from this
 * jar's {@code io/tenure/server/ui/}, read once when the front end starts and served from memory.
 * {@code /ui} and {@code /ui/} give the page; {@code /ui/dashboard.css} and
 * {@code /ui/dashboard.js} its parts; any other path under {@code /ui/} is 404 {@code unknown_route}.
 *
 * <p>The page itself is public (it holds no data); its data comes from {@link DashboardApi},
 * which asks for a credential when authentication is on. A content security policy lets the page
 * load and connect to this member only: no inline script, no other origin.
 */
final class DashboardPage {
    private static final String FOLDER = "/io/tenure/server/ui/";
    static final String SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:;"
            + " base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

    /** A file of the page: its bytes and content type. */
    private record File(byte[] bytes, String contentType) {}

    private final Map<String, File> files;

    private DashboardPage(Map<String, File> files) {
        this.files = files;
    }

    /**
     * Reads the page's files from the class path.
     *
     * @throws IllegalStateException when one is missing from the jar (a broken build)
     */
    static DashboardPage load() {
        return new DashboardPage(Map.of(
                "index.html", read("index.html", "text/html; charset=utf-8"),
                "dashboard.css", read("dashboard.css", "text/css; charset=utf-8"),
                "dashboard.js", read("dashboard.js", "text/javascript; charset=utf-8")));
    }

    private static File read(String name, String contentType) {
        try (InputStream in = DashboardPage.class.getResourceAsStream(FOLDER + name)) {
            if (in == null) {
                throw new IllegalStateException("the dashboard's " + FOLDER + name + " is not on the class path");
            }
            return new File(in.readAllBytes(), contentType);
        } catch (IOException e) {
            throw new IllegalStateException("cannot read the dashboard's " + FOLDER + name + ": " + e.getMessage(), e);
        }
    }

    /** Answers {@code GET /ui} and {@code GET /ui/...}. */
    void serve(Context ctx) {
        String path = ctx.path();
        String name = path.equals("/ui") || path.equals("/ui/") ? "index.html" : path.substring("/ui/".length());
        File file = files.get(name);
        if (file == null) {
            throw new Failure(ErrorCode.UNKNOWN_ROUTE, null, "no endpoint GET " + path + "; the dashboard is GET /ui");
        }
        ctx.header("Content-Security-Policy", SECURITY_POLICY);
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("Referrer-Policy", "no-referrer");
        // Served from memory: a new member version's page replaces the old one on the next load.
        ctx.header("Cache-Control", "no-cache");
        ctx.contentType(file.contentType()).result(file.bytes());
    }
}
