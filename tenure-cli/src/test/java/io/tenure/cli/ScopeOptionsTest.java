package io.tenure.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.tenure.client.LockMode;
import io.tenure.client.Scope;
import io.tenure.client.ScopeMode;
import io.tenure.client.ScopePart;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.TypeConversionException;

/**
 * The scope options of {@code tenure lock} and {@code tenure describe} ({@code --path},
 * {@code --inode}, {@code --range}, {@code --shared}, {@code --blocked-by}): parsing and the usage
 * errors, all decided before any member is contacted (the endpoint given is never reachable).
 */
class ScopeOptionsTest {
    /** Nothing listens here: a test that got as far as a call would fail with exit 1, not 2. */
    private static final String NOWHERE = "127.0.0.1:1";

    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();

    private int run(String... args) {
        CommandLine commandLine = TenureCli.commandLine(java.util.Map.of("TENURE_ENDPOINTS", NOWHERE));
        commandLine.setOut(new PrintWriter(out, true));
        commandLine.setErr(new PrintWriter(err, true));
        return commandLine.execute(args);
    }

    private static <T> T parsed(Class<T> type, String... args) {
        ParseResult result = TenureCli.commandLine().parseArgs(args);
        return type.cast(result.subcommand().commandSpec().userObject());
    }

    /** The usage error's own line: {@code tenure lock: ...}, then only the pointer to --help. */
    private String usageLine() {
        List<String> lines = err.toString().lines().toList();
        assertThat(lines).as(err.toString()).hasSize(2);
        assertThat(lines.get(1)).startsWith("Try '");
        return lines.get(0);
    }

    @Test
    void rangesInodesAndPathsAreReadAsTheSdkMakesThem() {
        assertThat(ScopeOptions.range("42:0-4096")).isEqualTo(Scope.byteRange(42, 0, 4096));
        assertThat(ScopeOptions.range("0:9223372036854775806-9223372036854775807"))
                .isEqualTo(Scope.byteRange(0, Long.MAX_VALUE - 1, Long.MAX_VALUE));
        assertThat(ScopeOptions.inode("7")).isEqualTo(Scope.inode(7));
        assertThat(ScopeOptions.path("/data//a/./b/../c/")).isEqualTo(Scope.path("/data/a/c"));
        assertThat(ScopeOptions.path("/")).isEqualTo(Scope.path("/"));
    }

    @Test
    void badValuesAreRefusedWithOneLineSayingWhy() {
        assertThatThrownBy(() -> ScopeOptions.range("42:10-5")).isInstanceOf(TypeConversionException.class)
                .hasMessage("'42:10-5': the end (5) must be above the start (10); the range is [START, END)");
        assertThatThrownBy(() -> ScopeOptions.range("42:5-5")).hasMessageContaining("must be above the start");
        assertThatThrownBy(() -> ScopeOptions.range("x")).hasMessageContaining("'x' is not INODE:START-END");
        assertThatThrownBy(() -> ScopeOptions.range("42:0")).hasMessageContaining("is not INODE:START-END");
        assertThatThrownBy(() -> ScopeOptions.range("-1:0-5")).hasMessageContaining("is not INODE:START-END");
        assertThatThrownBy(() -> ScopeOptions.range("42:0-9223372036854775808")).hasMessageContaining("at most 9223372036854775807");
        assertThatThrownBy(() -> ScopeOptions.range("4\n2:0-5")).hasMessageContaining("'4\\u000a2:0-5'")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        assertThatThrownBy(() -> ScopeOptions.inode("x")).hasMessageContaining("'x' is not an inode");
        assertThatThrownBy(() -> ScopeOptions.inode("-3")).hasMessageContaining("'-3' is not an inode");
        assertThatThrownBy(() -> ScopeOptions.path("relative")).hasMessageContaining("absolute");
        assertThatThrownBy(() -> ScopeOptions.path("")).hasMessageContaining("absolute");
        assertThatThrownBy(() -> ScopeOptions.path("/..")).hasMessageContaining("above the root");
        assertThatThrownBy(() -> ScopeOptions.path("/a\nb")).hasMessageContaining("control characters")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
        assertThatThrownBy(() -> ScopeOptions.path("rel\u0000ative")).hasMessageContaining("control characters");
        assertThatThrownBy(() -> ScopeOptions.path("/" + "a".repeat(Scope.MAX_PATH_LENGTH))).hasMessageContaining("longer than 4096");
    }

    @Test
    void lockReadsScopesInPlaceOfNameAndEveryArgumentAsTheCommand() {
        LockCommand lock = parsed(LockCommand.class, "lock", "--range", "42:0-4096", "--path", "/data/a", "--inode", "7", "--range",
                "43:0-1", "--timeout", "1s", "--", "sh", "-c", "exit 3");
        assertThat(lock.lockName()).isNull();
        assertThat(lock.command()).containsExactly("sh", "-c", "exit 3");
        assertThat(lock.parts()).containsExactly(ScopePart.exclusive(Scope.path("/data/a")), ScopePart.exclusive(Scope.inode(7)),
                ScopePart.exclusive(Scope.byteRange(42, 0, 4096)), ScopePart.exclusive(Scope.byteRange(43, 0, 1)));
        assertThat(lock.name()).isEqualTo("path /data/a, inode 7, range 42:0-4096, range 43:0-1");

        LockCommand noDash = parsed(LockCommand.class, "lock", "--range", "42:0-10", "true");
        assertThat(noDash.command()).as("without --, every positional is COMMAND's when scopes are given").containsExactly("true");
    }

    @Test
    void sharedIsReadAndAppliesToEveryPart() {
        LockCommand shared = parsed(LockCommand.class, "lock", "--shared", "--range", "42:0-10", "--path", "/a", "--", "true");
        assertThat(shared.parts()).extracting(ScopePart::mode).containsOnly(ScopeMode.SHARED);
        assertThat(parsed(LockCommand.class, "lock", "--read", "--inode", "1", "--", "true").parts())
                .extracting(ScopePart::mode).as("--read is --shared for scopes").containsOnly(ScopeMode.SHARED);
        assertThat(parsed(LockCommand.class, "lock", "jobs", "--shared", "--", "true").lockMode())
                .as("--shared with NAME is --read").isEqualTo(LockMode.READ);
        assertThat(parsed(LockCommand.class, "lock", "--write", "--inode", "1", "--", "true").parts())
                .extracting(ScopePart::mode).containsOnly(ScopeMode.EXCLUSIVE);
        assertThat(parsed(LockCommand.class, "lock", "--inode", "1", "--", "true").parts())
                .extracting(ScopePart::mode).as("exclusive by default").containsOnly(ScopeMode.EXCLUSIVE);

        assertThat(run("lock", "--shared", "--write", "--inode", "1", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).contains("--shared, --write are mutually exclusive");
    }

    @Test
    void aBadRangeIsAUsageErrorNamingTheOptionBeforeAnyCall() {
        assertThat(run("lock", "--range", "42:10-5", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).isEqualTo("tenure lock: Invalid value for option '--range' (INODE:START-END): '42:10-5': "
                + "the end (5) must be above the start (10); the range is [START, END)");

        err.getBuffer().setLength(0);
        assertThat(run("lock", "--range", "x", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).contains("'--range'", "'x' is not INODE:START-END");

        err.getBuffer().setLength(0);
        assertThat(run("lock", "--path", "relative", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).contains("'--path'", "absolute");

        err.getBuffer().setLength(0);
        assertThat(run("lock", "--path", "/data/\u001b[2Jx", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).contains("'--path'", "control characters").doesNotContain("\u001b");

        err.getBuffer().setLength(0);
        assertThat(run("lock", "--inode", "forty-two", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).contains("'--inode'", "'forty-two' is not an inode");
    }

    @Test
    void nameAndScopesTogetherOrNeitherAreUsageErrors() {
        assertThat(run("lock", "jobs", "--range", "42:0-10", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).contains("Give NAME or scopes", "not both", "'jobs'");

        err.getBuffer().setLength(0);
        assertThat(run("lock", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).contains("Missing NAME, or --path, --inode or --range");

        err.getBuffer().setLength(0);
        assertThat(run("lock", "--range", "42:0-10")).as("no COMMAND").isEqualTo(2);
        assertThat(usageLine()).contains("COMMAND");
    }

    @Test
    void aSetBreakingTheRulesIsAUsageError() {
        assertThat(run("lock", "--range", "42:0-10", "--range", "42:5-20", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).contains("Invalid scopes", "range 42:0-10", "range 42:5-20", "overlap");

        err.getBuffer().setLength(0);
        assertThat(run("lock", "--path", "/a", "--path", "/a/b/..", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).contains("path /a twice");

        err.getBuffer().setLength(0);
        assertThat(run("lock", "--inode", "42", "--range", "42:0-1", "--", "true")).isEqualTo(2);
        assertThat(usageLine()).contains("inode 42", "range 42:0-1", "overlap");

        err.getBuffer().setLength(0);
        String[] tooMany = new String[2 * (ScopePart.MAX_PARTS + 1) + 3];
        tooMany[0] = "lock";
        for (int i = 0; i <= ScopePart.MAX_PARTS; i++) {
            tooMany[1 + 2 * i] = "--inode";
            tooMany[2 + 2 * i] = Integer.toString(i);
        }
        tooMany[tooMany.length - 2] = "--";
        tooMany[tooMany.length - 1] = "true";
        assertThat(run(tooMany)).isEqualTo(2);
        assertThat(usageLine()).contains("1 to 64 parts, got 65");
    }

    @Test
    void describeTakesNameOrScopesAndBlockedByOnlyWithScopes() {
        DescribeCommand scopes = parsed(DescribeCommand.class, "describe", "--range", "42:0-10", "--path", "/a", "--blocked-by", "--shared");
        assertThat(scopes.name).isNull();
        assertThat(scopes.scopes.scopes()).containsExactly(Scope.path("/a"), Scope.byteRange(42, 0, 10));
        assertThat(scopes.blockedBy).isTrue();
        assertThat(scopes.shared).isTrue();

        assertThat(run("describe")).isEqualTo(2);
        assertThat(usageLine()).contains("Missing NAME, or --path, --inode or --range");

        err.getBuffer().setLength(0);
        assertThat(run("describe", "jobs", "--inode", "4")).isEqualTo(2);
        assertThat(usageLine()).contains("not both");

        err.getBuffer().setLength(0);
        assertThat(run("describe", "jobs", "--blocked-by")).isEqualTo(2);
        assertThat(usageLine()).contains("--blocked-by applies to scopes");

        err.getBuffer().setLength(0);
        assertThat(run("describe", "--inode", "4", "--shared")).isEqualTo(2);
        assertThat(usageLine()).contains("--shared applies only with --blocked-by");

        err.getBuffer().setLength(0);
        assertThat(run("describe", "--range", "42:10-5")).isEqualTo(2);
        assertThat(usageLine()).contains("'--range'", "must be above the start");

        err.getBuffer().setLength(0);
        assertThat(run("describe", "--path", "/a", "--path", "/a/b", "--blocked-by")).isEqualTo(2);
        assertThat(usageLine()).contains("Invalid scopes", "overlap");
    }

    @Test
    void helpShowsTheScopeOptionsAndSharedAsRead() {
        assertThat(run("lock", "--help")).isZero();
        assertThat(out.toString()).contains("--path=PATH", "--inode=INODE", "--range=INODE:START-END", "--shared", "[NAME] COMMAND");
        assertThat(out.toString().replaceAll("\\s+", " ")).contains("[--read | --write]", "exclusive unless --shared (or --read");
        out.getBuffer().setLength(0);
        assertThat(run("describe", "--help")).isZero();
        assertThat(out.toString()).contains("--range=INODE:START-END", "--blocked-by", "blocked_by:", "holder:");
    }
}
