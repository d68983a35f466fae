package io.tenure.cli;

import io.tenure.client.Lease;
import io.tenure.client.LockHandle;
import io.tenure.client.LockMode;
import io.tenure.client.LockNotAcquiredException;
import io.tenure.client.Scope;
import io.tenure.client.ScopeBlocker;
import io.tenure.client.ScopeHandle;
import io.tenure.client.ScopeMode;
import io.tenure.client.ScopeNotAcquiredException;
import io.tenure.client.ScopePart;
import io.tenure.client.TenureClient;
import io.tenure.client.TenureLock;
import io.tenure.client.TenureReadWriteLock;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;

/**
 * {@code tenure lock NAME [--read|--write] -- COMMAND}: runs a command while holding a lock; or,
 * with {@code --path}, {@code --inode} and {@code --range} in place of NAME, while holding a set
 * of lock scopes, all or nothing.
 */
@Command(name = "lock",
        description = {
            "Runs COMMAND while holding lock NAME, alone (--write, the default) or beside other readers (--read).",
            "Grants a lease, waits for the lock, runs COMMAND with the terminal's input and output, keeps the "
                    + "lease alive while it runs, then releases the lock and revokes the lease. COMMAND sees "
                    + "TENURE_LOCK_KEY, TENURE_LEASE_ID, TENURE_FENCING_TOKEN and TENURE_LOCK_MODE ('read' or 'write') "
                    + "in its environment; pass the fencing token to any storage it writes, so writes of an older "
                    + "holder can be refused.",
            "Readers hold NAME together; a writer holds it alone. Waiters are granted in the order they asked: a "
                    + "waiting writer holds back the readers that ask after it, and the readers queued right behind a "
                    + "writer are granted together when it releases.",
            "In place of NAME, lock scopes: --path, --inode and --range, each repeatable, held together all or nothing "
                    + "under one fencing token, exclusive unless --shared (or --read: every part shared). The "
                    + "set is granted as soon as none of its parts conflicts with a holder or an earlier waiter: a "
                    + "writer to 42:200-300 does not wait behind a writer to 42:0-100. TENURE_LOCK_KEY is then the "
                    + "scopes, as in 'path /data/a, range 42:0-4096', and TENURE_LOCK_MODE 'read' when they are shared. "
                    + "Waiting for a set that would close a cycle of waits is refused with 'deadlock: ...' (exit 1), "
                    + "naming the leases and scopes.",
            LeaseBoundCommand.LOST_LEASE_HELP + "the lock to anyone else.",
            LeaseBoundCommand.DOUBLE_DASH_HELP
        })
final class LockCommand extends LeaseBoundCommand {
    /** The variable that tells COMMAND the mode it holds NAME in: {@code read} or {@code write}. */
    static final String MODE_VARIABLE = "TENURE_LOCK_MODE";

    /** NAME and COMMAND, or COMMAND alone when scopes are given: picocli cannot tell them apart by position. */
    @Parameters(index = "0..*", arity = "1..*", paramLabel = "[NAME] COMMAND",
            description = "NAME, the lock to hold (not with --path, --inode or --range), then the command and its arguments.")
    List<String> arguments;

    @Option(names = "--metadata", paramLabel = "TEXT", description = "Shown to others with the holder.")
    String metadata;

    @ArgGroup(exclusive = true)
    Mode mode = new Mode();

    @Mixin
    ScopeOptions scopes;

    /** {@code --read} or {@code --write}, at most one of them ({@link #shared} is {@code --read} by another name, outside the group). */
    static final class Mode {
        @Option(names = "--read", description = "Hold NAME in read mode, shared with other readers.")
        boolean read;

        @Option(names = "--write", description = "Hold NAME in write mode, alone (the default); every scope exclusive.")
        boolean write;

        LockMode lockMode() {
            return read ? LockMode.READ : LockMode.WRITE;
        }
    }

    /**
     * Outside the group so that picocli's messages about {@code --read} and {@code --write} keep
     * naming them; {@link #validate()} refuses it beside {@code --write}.
     */
    @Option(names = "--shared", description = "Hold every scope shared with other shared holders; with NAME, the same as --read.")
    boolean shared;

    /** How NAME is held: read with --read or --shared. */
    LockMode lockMode() {
        return shared ? LockMode.READ : mode.lockMode();
    }

    /** How every scope is held: shared with --shared or --read. */
    ScopeMode scopeMode() {
        return lockMode() == LockMode.READ ? ScopeMode.SHARED : ScopeMode.EXCLUSIVE;
    }

    /** NAME, or null when scopes are given. */
    String lockName() {
        return scopes.isEmpty() && !arguments.isEmpty() ? arguments.get(0) : null;
    }

    /** What is held, for messages and TENURE_LOCK_KEY: NAME, or the scopes. */
    @Override
    String name() {
        return scopes.isEmpty() ? lockName() : scopes.scopes().stream().map(Scope::toString).collect(Collectors.joining(", "));
    }

    @Override
    List<String> command() {
        return scopes.isEmpty() ? arguments.subList(Math.min(1, arguments.size()), arguments.size()) : arguments;
    }

    /** The scopes with the mode, as one set. */
    List<ScopePart> parts() {
        return scopes.scopes().stream().map(scope -> new ScopePart(scope, scopeMode())).toList();
    }

    @Override
    void validate() {
        if (shared && mode.write) {
            throw new ParameterException(spec.commandLine(), "Error: --shared, --write are mutually exclusive (specify only one)");
        }
        if (scopes.isEmpty()) {
            if (beforeDoubleDash() == 0) {
                throw new ParameterException(spec.commandLine(), "Missing NAME, or --path, --inode or --range: say what to hold");
            }
            if (arguments.size() < 2) {
                throw new ParameterException(spec.commandLine(), "Missing required parameter: 'COMMAND'");
            }
            return;
        }
        if (beforeDoubleDash() > 0) {
            throw new ParameterException(spec.commandLine(), "Give NAME or scopes (--path, --inode, --range), not both: '"
                    + arguments.get(0) + "' comes before '--' beside " + name());
        }
        try {
            ScopePart.checkSet(parts()); // the SDK's rules, checked before any call
        } catch (IllegalArgumentException e) {
            throw new ParameterException(spec.commandLine(), "Invalid scopes: " + e.getMessage());
        }
    }

    /**
     * How many positional parameters came before {@code --}: NAME's place. Without {@code --}
     * the first is NAME when no scope is given, and every one is COMMAND's otherwise (-1: unknown).
     */
    private int beforeDoubleDash() {
        List<String> args = spec.commandLine().getParseResult().expandedArgs();
        int delimiter = args.indexOf("--");
        return delimiter < 0 ? -1 : Math.max(0, arguments.size() - (args.size() - delimiter - 1));
    }

    @Override
    Grant acquire(TenureClient client, Lease lease) throws NotAcquired {
        return scopes.isEmpty() ? acquireLock(client, lease) : acquireScopes(client, lease);
    }

    private Grant acquireLock(TenureClient client, Lease lease) throws NotAcquired {
        String name = lockName();
        LockMode lockMode = lockMode();
        TenureReadWriteLock readWrite = client.readWriteLock(name, lease);
        TenureLock lock = (lockMode == LockMode.READ ? readWrite.readLock() : readWrite.writeLock()).withMetadata(metadata);
        LockHandle handle;
        try {
            handle = timeout == null ? lock.acquire() : lock.acquire(timeout);
        } catch (LockNotAcquiredException e) {
            throw new NotAcquired("'" + name + "' was not acquired" + (lockMode == LockMode.READ ? " in read mode" : "")
                    + " within " + timeout.toMillis() + " ms" + (e.holder().isEmpty() ? "" : "; held by '" + e.holder() + "'"));
        }
        return new Grant(handle.key(), handle.fencingToken(),
                Map.of(MODE_VARIABLE, Formats.mode(handle.mode())), handle::release);
    }

    private Grant acquireScopes(TenureClient client, Lease lease) throws NotAcquired {
        byte[] shown = metadata == null ? null : metadata.getBytes(StandardCharsets.UTF_8);
        ScopeHandle handle;
        try {
            handle = client.lockAll(parts(), lease, timeout, shown);
        } catch (ScopeNotAcquiredException e) {
            throw new NotAcquired("'" + name() + "' was not acquired" + (scopeMode() == ScopeMode.SHARED ? " in shared mode" : "") + " within "
                    + timeout.toMillis() + " ms" + (e.blockers().isEmpty() ? ""
                    : ": " + e.blockers().stream().map(ScopeBlocker::toString).collect(Collectors.joining("; "))));
        }
        return new Grant(name(), handle.fencingToken(), Map.of(MODE_VARIABLE, Formats.mode(lockMode())), handle::release);
    }
}
