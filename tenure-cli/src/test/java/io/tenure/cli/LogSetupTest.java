package io.tenure.cli;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.AsyncAppender;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.Configurator.ExecutionStatus;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.ConsoleAppender;
import java.nio.charset.StandardCharsets;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

class LogSetupTest {

    @Test
    void logbackFindsTheSetUpAsAService() {
        assertThat(ServiceLoader.load(ch.qos.logback.classic.spi.Configurator.class).stream().map(ServiceLoader.Provider::type))
                .contains(LogSetup.class);
    }

    @Test
    void oneLinePerEventOnStderrThroughAWriterThread() {
        LoggerContext context = new LoggerContext();
        LogSetup setup = new LogSetup();
        setup.setContext(context);

        assertThat(setup.configure(context)).isEqualTo(ExecutionStatus.DO_NOT_INVOKE_NEXT_IF_ANY);

        ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
        assertThat(root.getLevel()).isEqualTo(Level.WARN);
        assertThat(context.getLogger("io.tenure").getLevel()).isEqualTo(Level.INFO);
        assertThat(context.getLogger("org.apache.ratis").getLevel()).isEqualTo(Level.WARN);
        assertThat(context.getLogger("io.grpc").getLevel()).isEqualTo(Level.WARN);
        assertThat(context.getLogger("com.alipay.sofa.common.log").getLevel()).isEqualTo(Level.ERROR);

        AsyncAppender async = (AsyncAppender) root.getAppender("ASYNC");
        assertThat(async.isStarted()).isTrue();
        assertThat(async.getQueueSize()).isEqualTo(LogSetup.QUEUE_SIZE);
        assertThat(async.getDiscardingThreshold()).isZero();
        @SuppressWarnings("unchecked")
        ConsoleAppender<ILoggingEvent> stderr = (ConsoleAppender<ILoggingEvent>) async.getAppender("STDERR");
        assertThat(stderr.getTarget()).isEqualTo("System.err");

        ch.qos.logback.classic.Logger logger = context.getLogger("io.tenure.server.TenureServer");
        LoggingEvent event = new LoggingEvent(ch.qos.logback.classic.Logger.class.getName(), logger, Level.ERROR,
                "event=apply_failed index=7", new IllegalStateException("bad\nentry"), null);
        String line = new String(stderr.getEncoder().encode(event), StandardCharsets.UTF_8);

        assertThat(line).endsWith(System.lineSeparator());
        assertThat(line.substring(0, line.length() - System.lineSeparator().length()))
                .doesNotContain("\n", "\r", "\t")
                .contains(" ERROR ", "io.tenure.server.TenureServer - event=apply_failed index=7",
                        "java.lang.IllegalStateException: bad entry", "at io.tenure.cli.LogSetupTest");
        context.stop();
    }
}
