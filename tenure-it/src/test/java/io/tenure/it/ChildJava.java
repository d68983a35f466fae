package io.tenure.it;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The java command that runs a main class of this JVM's class path in a child process: members,
 * workers and helpers of the process-level tests (same heap and JVM options for all, set with
 * {@code -Dtenure.it.childHeap} and {@code -Dtenure.it.childJvmArgs}; Tenure's jars copied aside).
 */
public final class ChildJava {
    /** Heap of each child JVM: members, helpers and the test JVM share a 2-core machine. */
    public static final String CHILD_HEAP = System.getProperty("tenure.it.childHeap", "-Xmx256m");
    /** Extra options of each child JVM, space separated ({@code -Dtenure.it.childJvmArgs=...}). */
    public static final String CHILD_JVM_ARGS = System.getProperty("tenure.it.childJvmArgs", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1");

    private static String classPath;

    private ChildJava() {
    }

    /** {@code java HEAP OPTIONS -cp CLASSPATH mainClass}. */
    public static List<String> command(String mainClass) {
        return command(CHILD_HEAP, mainClass);
    }

    /** As {@link #command(String)} with another heap option (small helpers need less). */
    public static List<String> command(String heap, String mainClass) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, heap));
        Arrays.stream(CHILD_JVM_ARGS.trim().split("\\s+")).filter(a -> !a.isEmpty()).forEach(command::add);
        command.addAll(List.of("-cp", classPath(), mainClass));
        return command;
    }

    /**
     * This JVM's class path, with Tenure's own jars copied aside once: a {@code mvn install}
     * running meanwhile replaces the jars in the local repository under running children, which
     * then fail to load their classes lazily.
     */
    private static synchronized String classPath() {
        if (classPath == null) {
            try {
                Path copies = Files.createTempDirectory("tenure-it-classpath");
                copies.toFile().deleteOnExit(); // registered first, deleted last (after its files)
                List<String> entries = new ArrayList<>();
                for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
                    Path path = Path.of(entry);
                    if (entry.endsWith(".jar") && path.getFileName().toString().startsWith("tenure-") && Files.isRegularFile(path)) {
                        Path copy = copies.resolve(path.getFileName());
                        Files.copy(path, copy, StandardCopyOption.REPLACE_EXISTING);
                        copy.toFile().deleteOnExit();
                        entries.add(copy.toString());
                    } else {
                        entries.add(entry);
                    }
                }
                classPath = String.join(File.pathSeparator, entries);
            } catch (IOException e) {
                classPath = System.getProperty("java.class.path");
            }
        }
        return classPath;
    }
}
