package io.tenure.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import picocli.CommandLine.IDefaultValueProvider;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;

/**
 * Where a setting comes from when its flag is not given. picocli asks this provider only for
 * options missing from the command line, so the precedence is:
 *
 * <ol>
 *   <li>the flag ({@code --data-dir /var/lib/tenure});</li>
 *   <li>an environment variable named after the option: {@code TENURE_} and the option's long name
 *       in capitals with {@code _} for {@code -} ({@code TENURE_DATA_DIR}); an empty one counts as
 *       unset;</li>
 *   <li>for {@code tenure server}, the {@code --config} file ({@code data-dir = /var/lib/tenure},
 *       see {@link ConfigFile}), named by the flag or {@code TENURE_CONFIG};</li>
 *   <li>the option's default.</li>
 * </ol>
 *
 * <p>Every option of {@code tenure server} is a setting (except {@code --config} in the file
 * itself, {@code --help} and {@code --version}); of the client commands, {@code --endpoints}
 * and {@code --request-timeout}. Nothing else reads the environment. In particular the variables
 * that {@code tenure lock} and {@code tenure semaphore} give their command ({@link #RESERVED}) are
 * never read as settings, so a command run under a lock that runs {@code tenure} again cannot pick
 * up its parent's lock or lock mode, nor {@code --permits} its parent's {@code TENURE_PERMITS}.
 *
 * <p>It remembers which values it supplied, so that an invalid one is reported with its source
 * ({@code TENURE_CLIENT_PORT=abc: ...}).
 */
final class SettingSources implements IDefaultValueProvider {
    static final String PREFIX = "TENURE_";
    /** The variables {@code tenure lock} and {@code tenure semaphore} set for their command; never settings. */
    static final Set<String> RESERVED = Set.of(LeaseBoundCommand.KEY_VARIABLE, LeaseBoundCommand.LEASE_VARIABLE,
            LeaseBoundCommand.TOKEN_VARIABLE, LockCommand.MODE_VARIABLE, SemaphoreCommand.PERMITS_VARIABLE);
    /** The options of the client commands that the environment may set. */
    static final Set<String> CLIENT_SETTINGS = Set.of("--endpoints", "--request-timeout", "--cacert", "--cert", "--key", "--token");
    static final String CONFIG_OPTION = "--config";
    /**
     * dflockd's environment variables, read for the options of the text front end that carry
     * dflockd's flags (after Tenure's own variable, before the config file). dflockd's
     * {@code DFLOCKD_MAX_CONNECTIONS} and {@code DFLOCKD_SHUTDOWN_TIMEOUT_S} are not read: those
     * options keep Tenure's meaning.
     */
    static final Map<String, String> DFLOCKD_VARIABLES = Map.ofEntries(
            Map.entry("--host", "DFLOCKD_HOST"),
            Map.entry("--text-port", "DFLOCKD_PORT"),
            Map.entry("--default-lease-ttl", "DFLOCKD_DEFAULT_LEASE_TTL_S"),
            Map.entry("--lease-sweep-interval", "DFLOCKD_LEASE_SWEEP_INTERVAL_S"),
            Map.entry("--gc-interval", "DFLOCKD_GC_LOOP_SLEEP"),
            Map.entry("--gc-max-idle", "DFLOCKD_GC_MAX_UNUSED_TIME"),
            Map.entry("--max-locks", "DFLOCKD_MAX_LOCKS"),
            Map.entry("--max-keys", "DFLOCKD_MAX_KEYS"),
            Map.entry("--max-list-length", "DFLOCKD_MAX_LIST_LENGTH"),
            Map.entry("--max-waiters", "DFLOCKD_MAX_WAITERS"),
            Map.entry("--max-subscriptions", "DFLOCKD_MAX_SUBSCRIPTIONS"),
            Map.entry("--read-timeout", "DFLOCKD_READ_TIMEOUT_S"),
            Map.entry("--write-timeout", "DFLOCKD_WRITE_TIMEOUT_S"),
            Map.entry("--auto-release-on-disconnect", "DFLOCKD_AUTO_RELEASE_ON_DISCONNECT"),
            Map.entry("--cert-file", "DFLOCKD_TLS_CERT"),
            Map.entry("--key-file", "DFLOCKD_TLS_KEY"),
            Map.entry("--auth-token", "DFLOCKD_AUTH_TOKEN"),
            Map.entry("--auth-token-file", "DFLOCKD_AUTH_TOKEN_FILE"));

    private final Map<String, String> environment;
    /** Where each value this provider supplied came from, for error messages. */
    private final Map<ArgSpec, String> sources = new IdentityHashMap<>();
    private Path loadedPath;
    private ConfigFile loaded;

    SettingSources(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    /** The environment variable that sets {@code option}: {@code --data-dir} → {@code TENURE_DATA_DIR}. */
    static String variableOf(OptionSpec option) {
        return PREFIX + keyOf(option).toUpperCase(Locale.ROOT).replace('-', '_');
    }

    /** The config-file key of {@code option}: its first name without the dashes. */
    static String keyOf(OptionSpec option) {
        return option.names()[0].replaceFirst("^-+", "");
    }

    /** Whether the environment (and, for {@code tenure server}, the config file) may set {@code option}. */
    static boolean isSetting(OptionSpec option) {
        if (option.usageHelp() || option.versionHelp() || RESERVED.contains(variableOf(option))) {
            return false;
        }
        return isServerOption(option) || CLIENT_SETTINGS.contains(option.longestName());
    }

    private static boolean isServerOption(OptionSpec option) {
        return option.command() != null && option.command().userObject() instanceof ServerCommand;
    }

    @Override
    public String defaultValue(ArgSpec arg) {
        if (!(arg instanceof OptionSpec option) || !isSetting(option)) {
            return null;
        }
        String variable = variableOf(option);
        String fromEnvironment = environment.get(variable);
        if (fromEnvironment != null && !fromEnvironment.isEmpty()) {
            return supplied(option, fromEnvironment, variable + "=" + fromEnvironment);
        }
        String dflockd = isServerOption(option) ? DFLOCKD_VARIABLES.get(option.longestName()) : null;
        String fromDflockd = dflockd == null ? null : environment.get(dflockd);
        if (fromDflockd != null && !fromDflockd.isEmpty()) {
            String value = fromDflockd;
            if (option.longestName().equals("--auto-release-on-disconnect")) {
                // dflockd's booleans: 1, yes or true (any case) are true, anything else false
                value = Set.of("1", "yes", "true").contains(fromDflockd.strip().toLowerCase(Locale.ROOT)) ? "true" : "false";
            }
            return supplied(option, value, dflockd + "=" + fromDflockd);
        }
        if (isServerOption(option) && !option.longestName().equals(CONFIG_OPTION)) {
            ConfigFile file = configFile(option.command());
            ConfigFile.Entry entry = file == null ? null : file.get(keyOf(option));
            if (entry != null) {
                return supplied(option, entry.value(), "config file " + file.path() + ", line " + entry.line()
                        + " (" + entry.key() + " = " + entry.value() + ")");
            }
        }
        return null;
    }

    /** Where the value of {@code arg} came from, when this provider supplied it; else null (a flag or the default). */
    synchronized String sourceOf(ArgSpec arg) {
        return sources.get(arg);
    }

    /**
     * The config file of {@code tenure server} ({@code --config}, else {@code TENURE_CONFIG}), read
     * and checked once; null when there is none. Called for every unset option, and once by the
     * command itself so that a bad file is refused even when flags give every setting.
     *
     * @throws ParameterException naming the file (and line) when it cannot be read or has an error
     */
    synchronized ConfigFile configFile(CommandSpec server) {
        Path path = (Path) server.findOption(CONFIG_OPTION).getValue();
        if (path == null) {
            String variable = environment.get(PREFIX + "CONFIG");
            path = variable == null || variable.isEmpty() ? null : Path.of(variable);
        }
        if (path == null) {
            return null;
        }
        if (!path.equals(loadedPath)) {
            List<String> keys = new ArrayList<>();
            for (OptionSpec option : server.options()) {
                if (isSetting(option) && !option.longestName().equals(CONFIG_OPTION)) {
                    keys.add(keyOf(option));
                }
            }
            try {
                loaded = ConfigFile.read(path, keys);
            } catch (IllegalArgumentException e) {
                throw new ParameterException(server.commandLine(), e.getMessage());
            }
            loadedPath = path;
        }
        return loaded;
    }

    private synchronized String supplied(OptionSpec option, String value, String source) {
        sources.put(option, source);
        // picocli expands ${...} in default values; a setting is taken literally.
        return value.replace("${", "$${");
    }
}
