package io.tenure.testing;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The java command that runs a main class of this JVM's class path in a child process: members
 * ({@link MemberProcess}), workers and helpers of process-level tests. Unless told otherwise, every
 * child gets the same heap and JVM options, set with {@code -Dtenure.it.childHeap} and
 * {@code -Dtenure.it.childJvmArgs}, and Tenure's own jars copied aside.
 */
public final class ChildJava {
    /** Lets JRaft's transport (bolt, through Hessian) read {@code java.lang} classes' fields, as {@code ./tenure} does. */
    public static final String OPEN_JAVA_LANG = "--add-opens=java.base/java.lang=ALL-UNNAMED";

    /** Heap of each child JVM: members, helpers and the test JVM share a 2-core machine. */
    public static final String CHILD_HEAP = System.getProperty("tenure.it.childHeap", "-Xmx256m");
    /** Extra options of each child JVM, space separated ({@code -Dtenure.it.childJvmArgs=...}). */
    public static final String CHILD_JVM_ARGS = System.getProperty("tenure.it.childJvmArgs", "-XX:+UseSerialGC -XX:TieredStopAtLevel=1");

    private static String copiedClassPath;

    private ChildJava() {
    }

    /** {@code java HEAP OPTIONS -cp CLASSPATH mainClass}, with the class path's Tenure jars copied aside. */
    public static List<String> command(String mainClass) {
        return command(CHILD_HEAP, mainClass);
    }

    /** As {@link #command(String)} with another heap option (small helpers need less). */
    public static List<String> command(String heap, String mainClass) {
        List<String> options = new ArrayList<>(List.of(heap));
        Arrays.stream(CHILD_JVM_ARGS.trim().split("\\s+")).filter(a -> !a.isEmpty()).forEach(options::add);
        return command(options, copiedClassPath(), mainClass);
    }

    /** {@code java OPTIONS -cp CLASSPATH mainClass}: the JVM options and class path exactly as given. */
    public static List<String> command(List<String> jvmOptions, String classPath, String mainClass) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java));
        // As the tenure launcher does: bolt's Hessian reads StackTraceElement's fields, and prints a stack trace per field otherwise.
        command.add(OPEN_JAVA_LANG);
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", classPath, mainClass));
        return command;
    }

    /** This JVM's class path as it is. */
    public static String ownClassPath() {
        return System.getProperty("java.class.path");
    }

    /**
     * This JVM's class path, with Tenure's own jars copied aside once: a {@code mvn install}
     * running meanwhile replaces the jars in the local repository under running children, which
     * then fail to load their classes lazily. (Not for a class path that is one jar whose manifest
     * names the others relative to it, as {@code java -jar} has: the copy would lose them.)
     */
    public static synchronized String copiedClassPath() {
        if (copiedClassPath == null) {
            try {
                Path copies = Files.createTempDirectory("tenure-it-classpath");
                copies.toFile().deleteOnExit(); // registered first, deleted last (after its files)
                List<String> entries = new ArrayList<>();
                for (String entry : ownClassPath().split(File.pathSeparator)) {
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
                copiedClassPath = String.join(File.pathSeparator, entries);
            } catch (IOException e) {
                copiedClassPath = ownClassPath();
            }
        }
        return copiedClassPath;
    }
}
