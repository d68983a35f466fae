package io.tenure.cli;

import ch.qos.logback.classic.AsyncAppender;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.Configurator;
import ch.qos.logback.classic.spi.ConfiguratorRank;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import ch.qos.logback.core.spi.ContextAwareBase;
import org.slf4j.Logger;

/**
 * How the {@code tenure} command logs: one line per event on stderr, so that stdout carries only
 * what the commands print, written by a thread of its own. Set up in code, found by Logback as a
 * service, because reading the same settings from an XML file took a tenth of a member's start.
 *
 * <p>A configuration of the operator's own still wins: {@code -Dlogback.configurationFile=FILE}
 * (through {@code TENURE_JAVA_OPTS}), or a {@code logback.xml} or {@code logback-test.xml} put on
 * the class path, is read as Logback reads it without this class.
 */
@ConfiguratorRank(ConfiguratorRank.CUSTOM_NORMAL_PRIORITY)
public final class LogSetup extends ContextAwareBase implements Configurator {
    /**
     * One event, one line: a stack trace is folded into the line. The same pattern the XML
     * configuration of earlier releases had.
     */
    static final String PATTERN =
            "%d{yyyy-MM-dd'T'HH:mm:ss.SSSXXX} %-5level [%thread] %logger{36} - %msg%replace( %ex{short}){'[\\r\\n\\t]+', ' '}%nopex%n";

    /** Events are logged from the apply thread; a full queue blocks rather than drop an event. */
    static final int QUEUE_SIZE = 16384;

    private static volatile Thread early;

    /** Logback calls this with its context once, when the first logger is asked for. */
    public LogSetup() {
    }

    @Override
    public ExecutionStatus configure(LoggerContext context) {
        if (operatorsOwn()) {
            return ExecutionStatus.INVOKE_NEXT_IF_ANY;
        }
        PatternLayoutEncoder encoder = new PatternLayoutEncoder();
        encoder.setContext(context);
        encoder.setPattern(PATTERN);
        encoder.start();

        ConsoleAppender<ILoggingEvent> stderr = new ConsoleAppender<>();
        stderr.setContext(context);
        stderr.setName("STDERR");
        stderr.setTarget("System.err");
        stderr.setEncoder(encoder);
        stderr.start();

        AsyncAppender async = new AsyncAppender();
        async.setContext(context);
        async.setName("ASYNC");
        async.setQueueSize(QUEUE_SIZE);
        async.setDiscardingThreshold(0);
        async.addAppender(stderr);
        async.start();

        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        root.setLevel(Level.WARN);
        root.addAppender(async);
        context.getLogger("io.tenure").setLevel(Level.INFO);
        context.getLogger("org.apache.ratis").setLevel(Level.WARN);
        context.getLogger("io.grpc").setLevel(Level.WARN);
        // bolt (JRaft's peer transport) logs its routine start and stop at WARN; its errors stay.
        context.getLogger("com.alipay.sofa.common.log").setLevel(Level.ERROR);
        // "No data for snapshot reader": every fresh JRaft member has no snapshot yet.
        context.getLogger("com.alipay.sofa.jraft.storage.snapshot.local.LocalSnapshotStorage").setLevel(Level.ERROR);
        return ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY;
    }

    private static boolean operatorsOwn() {
        if (System.getProperty("logback.configurationFile") != null) {
            return true;
        }
        ClassLoader loader = LogSetup.class.getClassLoader();
        return loader.getResource("logback-test.xml") != null || loader.getResource("logback.xml") != null;
    }

    /**
     * Starts setting up logging on a thread of its own, so that it overlaps the parsing of the
     * command line; {@link #awaitReady()} waits for it. Nothing may ask for a logger in between:
     * SLF4J hands a logger asked for during its set-up a stand-in, which the level settings of
     * {@code --log-level} would miss.
     */
    static void startEarly() {
        Thread thread = new Thread(org.slf4j.LoggerFactory::getILoggerFactory, "tenure-log-setup");
        thread.setDaemon(true);
        early = thread;
        thread.start();
    }

    /** Returns once the set-up {@link #startEarly()} began has ended (at once when none began). */
    static void awaitReady() {
        Thread thread = early;
        if (thread == null) {
            return;
        }
        boolean interrupted = false;
        while (true) {
            try {
                thread.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }
}
