package io.tenure.it;

import io.tenure.testing.MemberProcess;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * On a failed test, prints the tail of every member's log (to the test's output, which surefire
 * keeps in {@code target/surefire-reports/*-output.txt}) and copies the whole logs to
 * {@code target/it-logs/<class>/<method>/}, since the {@code @TempDir} they live in is deleted.
 * Members made by {@link #member} and {@link #single} register their log files here at each launch.
 */
final class ItLogs implements BeforeEachCallback, TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler {
    static final int TAIL_LINES = 60;
    private static final List<Path> LOGS = new CopyOnWriteArrayList<>();

    /** A member process whose log is registered here at each launch (see {@link MemberProcess#builder}). */
    static MemberProcess.Builder member(String name, Path dataDir) {
        return MemberProcess.builder(name, dataDir).onLaunch(member -> register(member.logFile()));
    }

    /** A single member n1 with free ports, its log {@code DATA.log} registered here at each launch; not started. */
    static MemberProcess single(Path dataDir) {
        return member("n1", dataDir).build();
    }

    static void register(Path log) {
        if (!LOGS.contains(log)) {
            LOGS.add(log);
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        LOGS.clear();
    }

    @Override
    public void handleTestExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        dump(context, failure);
        throw failure;
    }

    @Override
    public void handleBeforeEachMethodExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        dump(context, failure);
        throw failure;
    }

    @Override
    public void handleAfterEachMethodExecutionException(ExtensionContext context, Throwable failure) throws Throwable {
        dump(context, failure);
        throw failure;
    }

    private static void dump(ExtensionContext context, Throwable failure) {
        String test = context.getRequiredTestClass().getSimpleName() + "."
                + context.getTestMethod().map(m -> m.getName()).orElse("class");
        Path keep = Path.of(System.getProperty("basedir", "."), "target", "it-logs",
                context.getRequiredTestClass().getSimpleName(), context.getTestMethod().map(m -> m.getName()).orElse("class"));
        StringBuilder out = new StringBuilder();
        out.append("\n===== ").append(test).append(" failed: ").append(failure).append('\n');
        for (Path log : new ArrayList<>(LOGS)) {
            out.append("----- last ").append(TAIL_LINES).append(" lines of ").append(log).append('\n');
            out.append(MemberProcess.tail(log, TAIL_LINES));
            try {
                Files.createDirectories(keep);
                if (Files.exists(log)) {
                    Files.copy(log, keep.resolve(log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                }
            } catch (IOException e) {
                out.append("(could not keep a copy: ").append(e).append(")\n");
            }
        }
        out.append("===== full logs copied to ").append(keep.toAbsolutePath()).append('\n');
        System.err.print(out);
        System.err.flush();
    }
}
