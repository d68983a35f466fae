package io.tenure.server.raft;

import io.tenure.core.TenureState;
import io.tenure.core.kernel.Command;
import io.tenure.core.kernel.CommandFormatException;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The internal log format: separate from the public API protos, so the wire contract can evolve
 * without rewriting logs. Layout: format version (1 byte), proposer, batch, proposer term, the
 * number of commands, then each command as its primitive's codec writes it (a type byte and its
 * fields; {@link TenureState#CODEC}).
 *
 * <p>An entry whose format version this build does not know, or that holds a command type it
 * does not know, is refused with {@link UnknownFormatException}: applying a guess would make
 * members diverge.
 */
public final class EntryCodec {
    public static final int FORMAT_VERSION = 1;
    /** The bytes of the entry's header: version, proposer, batch, term, count. */
    static final int HEADER_BYTES = 1 + 8 + 8 + 8 + 4;

    private EntryCodec() {}

    /** An entry written by a newer (or corrupt) build. */
    public static final class UnknownFormatException extends IOException {
        public UnknownFormatException(String message) {
            super(message);
        }
    }

    /** One command as it travels in an entry; the proposer encodes each once, on the caller's thread. */
    public static byte[] encode(Command command) {
        return TenureState.CODEC.encode(command);
    }

    /** An entry of commands already encoded by {@link #encode(Command)}. */
    public static byte[] encode(long proposer, long batch, long proposerTerm, List<byte[]> commands) {
        if (commands.isEmpty() || commands.size() > Entry.MAX_COMMANDS) {
            throw new IllegalArgumentException("an entry carries 1 to " + Entry.MAX_COMMANDS + " commands, got " + commands.size());
        }
        int size = HEADER_BYTES;
        for (byte[] c : commands) {
            size += c.length;
        }
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(size);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(FORMAT_VERSION);
            out.writeLong(proposer);
            out.writeLong(batch);
            out.writeLong(proposerTerm);
            out.writeInt(commands.size());
            for (byte[] c : commands) {
                out.write(c);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return bytes.toByteArray();
    }

    public static byte[] encode(Entry entry) {
        List<byte[]> commands = new ArrayList<>(entry.commands().size());
        entry.commands().forEach(c -> commands.add(encode(c)));
        return encode(entry.proposer(), entry.batch(), entry.proposerTerm(), commands);
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
                commands.add(TenureState.CODEC.read(in));
            }
            return new Entry(proposer, batch, term, commands);
        } catch (CommandFormatException e) {
            throw new UnknownFormatException(e.getMessage());
        } catch (EOFException e) {
            throw new UnknownFormatException("log entry is truncated");
        }
    }
}
