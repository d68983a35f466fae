package io.tenure.server.raft;

import io.tenure.core.Command;
import io.tenure.core.Command.LeaseExpire;
import io.tenure.core.Command.LeaseGrant;
import io.tenure.core.Command.LeaseRenew;
import io.tenure.core.Command.LeaseRevoke;
import io.tenure.core.Command.LockAcquire;
import io.tenure.core.Command.LockCancel;
import io.tenure.core.Command.LockRelease;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The internal log format: separate from the public API protos, so the wire contract can evolve
 * without rewriting logs. Layout: format version (1 byte), proposer, batch, proposer term, the
 * number of commands, then each command as a type byte and its fields.
 *
 * <p>An entry whose format version this build does not know is refused with
 * {@link UnknownFormatException}: applying a guess would make members diverge.
 */
public final class EntryCodec {
    public static final int FORMAT_VERSION = 1;

    private static final byte LEASE_GRANT = 1;
    private static final byte LEASE_RENEW = 2;
    private static final byte LEASE_REVOKE = 3;
    private static final byte LEASE_EXPIRE = 4;
    private static final byte LOCK_ACQUIRE = 5;
    private static final byte LOCK_CANCEL = 6;
    private static final byte LOCK_RELEASE = 7;
    private static final byte MEMBER_ENDPOINT = 8;
    private static final byte READ_BARRIER = 9;

    private static final Command.ReadBarrier READ_BARRIER_COMMAND = new Command.ReadBarrier();

    private EntryCodec() {}

    /** An entry written by a newer (or corrupt) build. */
    public static final class UnknownFormatException extends IOException {
        public UnknownFormatException(String message) {
            super(message);
        }
    }

    public static byte[] encode(Entry entry) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + 48 * entry.commands().size());
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT_VERSION);
            out.writeLong(entry.proposer());
            out.writeLong(entry.batch());
            out.writeLong(entry.proposerTerm());
            out.writeInt(entry.commands().size());
            for (Command c : entry.commands()) {
                write(out, c);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return bytes.toByteArray();
    }

    public static Entry decode(byte[] data) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(data));
        try {
            int version = in.readUnsignedByte();
            if (version != FORMAT_VERSION) {
                throw new UnknownFormatException("log entry format version " + version
                        + " is not supported by this build, which reads version " + FORMAT_VERSION);
            }
            long proposer = in.readLong();
            long batch = in.readLong();
            long term = in.readLong();
            int n = in.readInt();
            if (n < 1 || n > Entry.MAX_COMMANDS) {
                throw new UnknownFormatException("log entry declares " + n + " commands");
            }
            List<Command> commands = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                commands.add(read(in));
            }
            return new Entry(proposer, batch, term, commands);
        } catch (EOFException e) {
            throw new UnknownFormatException("log entry is truncated");
        }
    }

    private static void write(DataOutputStream out, Command command) throws IOException {
        if (command instanceof LockAcquire c) {
            out.writeByte(LOCK_ACQUIRE);
            writeString(out, c.key());
            out.writeLong(c.leaseId());
            writeBytes(out, c.metadata());
            out.writeBoolean(c.queue());
        } else if (command instanceof LockRelease c) {
            out.writeByte(LOCK_RELEASE);
            writeString(out, c.key());
            out.writeLong(c.leaseId());
            out.writeLong(c.fencingToken());
        } else if (command instanceof LockCancel c) {
            out.writeByte(LOCK_CANCEL);
            writeString(out, c.key());
            out.writeLong(c.leaseId());
        } else if (command instanceof LeaseRenew c) {
            out.writeByte(LEASE_RENEW);
            out.writeInt(c.leaseIds().length);
            for (long id : c.leaseIds()) {
                out.writeLong(id);
            }
        } else if (command instanceof LeaseGrant c) {
            out.writeByte(LEASE_GRANT);
            out.writeLong(c.leaseId());
            out.writeLong(c.ttlMillis());
            writeString(out, c.clientId());
        } else if (command instanceof LeaseRevoke c) {
            out.writeByte(LEASE_REVOKE);
            out.writeLong(c.leaseId());
        } else if (command instanceof LeaseExpire c) {
            out.writeByte(LEASE_EXPIRE);
            out.writeLong(c.leaseId());
            out.writeLong(c.renewedAt());
        } else if (command instanceof Command.MemberEndpoint c) {
            out.writeByte(MEMBER_ENDPOINT);
            writeString(out, c.member());
            writeString(out, c.clientEndpoint());
        } else if (command instanceof Command.ReadBarrier) {
            out.writeByte(READ_BARRIER);
        } else {
            throw new IllegalArgumentException("no encoding for " + command.getClass().getName());
        }
    }

    private static Command read(DataInputStream in) throws IOException {
        byte type = in.readByte();
        switch (type) {
            case LOCK_ACQUIRE:
                return new LockAcquire(readString(in), in.readLong(), readBytes(in), in.readBoolean());
            case LOCK_RELEASE:
                return new LockRelease(readString(in), in.readLong(), in.readLong());
            case LOCK_CANCEL:
                return new LockCancel(readString(in), in.readLong());
            case LEASE_RENEW: {
                int n = in.readInt();
                if (n < 0 || n > (1 << 24)) {
                    throw new UnknownFormatException("lease renewal declares " + n + " leases");
                }
                long[] ids = new long[n];
                for (int i = 0; i < n; i++) {
                    ids[i] = in.readLong();
                }
                return new LeaseRenew(ids);
            }
            case LEASE_GRANT:
                return new LeaseGrant(in.readLong(), in.readLong(), readString(in));
            case LEASE_REVOKE:
                return new LeaseRevoke(in.readLong());
            case LEASE_EXPIRE:
                return new LeaseExpire(in.readLong(), in.readLong());
            case MEMBER_ENDPOINT:
                return new Command.MemberEndpoint(readString(in), readString(in));
            case READ_BARRIER:
                return READ_BARRIER_COMMAND;
            default:
                throw new UnknownFormatException("unknown command type " + type + " in log entry");
        }
    }

    private static void writeString(DataOutputStream out, String s) throws IOException {
        writeBytes(out, s == null ? new byte[0] : s.getBytes(StandardCharsets.UTF_8));
    }

    private static String readString(DataInputStream in) throws IOException {
        return new String(readBytes(in), StandardCharsets.UTF_8);
    }

    private static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
        if (b == null) {
            out.writeInt(0);
            return;
        }
        out.writeInt(b.length);
        out.write(b);
    }

    private static byte[] readBytes(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > (1 << 20)) {
            throw new UnknownFormatException("field length " + n + " out of range in log entry");
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }
}
