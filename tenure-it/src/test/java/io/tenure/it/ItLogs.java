package io.tenure.it;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.LifecycleMethodExecutionExceptionHandler;
import org.junit.jupiter.api.extension.TestExecutionExceptionHandler;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
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
 * Members register their log files here as they start.
 */
final class ItLogs implements BeforeEachCallback, TestExecutionExceptionHandler, LifecycleMethodExecutionExceptionHandler {
    static final int TAIL_LINES = 60;
    private static final List<Path> LOGS = new CopyOnWriteArrayList<>();

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
            out.append(tail(log, TAIL_LINES));
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

    /** The last {@code lines} lines of a file, or a note that it cannot be read. */
    static String tail(Path file, int lines) {
        try {
            if (!Files.exists(file)) {
                return "(no log)\n";
            }
            String[] all = new String(Files.readAllBytes(file), StandardCharsets.UTF_8).split("\n", -1);
            StringBuilder text = new StringBuilder();
            for (int i = Math.max(0, all.length - 1 - lines); i < all.length; i++) {
                text.append(all[i]).append(i < all.length - 1 ? "\n" : "");
            }
            return text.length() == 0 || text.charAt(text.length() - 1) != '\n' ? text.append('\n').toString() : text.toString();
        } catch (IOException | RuntimeException e) {
            return "(cannot read: " + e + ")\n";
        }
    }
}
