package io.tenure.core.kernel;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The log encoding of every command: a type tag byte, then the fields its {@link CommandType}
 * writes. Built once from the kernel's types and each primitive's, refusing two types with one
 * tag or one simple name (the audit log names commands by it). A command with several encodings
 * (an older one kept, see {@link CommandType#older}) lists them oldest first.
 */
public final class CommandCodec {
    private final CommandType<?>[] byTag = new CommandType<?>[256];
    /** Each command's encodings, oldest first: a command is written with the first that carries it. */
    private final Map<Class<?>, List<CommandType<?>>> byClass = new HashMap<>();

    public CommandCodec(List<CommandType<?>> types) {
        Map<String, Class<?>> names = new HashMap<>();
        for (CommandType<?> type : types) {
            if (byTag[type.tag()] != null) {
                throw new IllegalArgumentException("command tag " + type.tag() + " is used by both "
                        + byTag[type.tag()].type().getName() + " and " + type.type().getName());
            }
            Class<?> sameName = names.put(type.type().getSimpleName(), type.type());
            if (sameName != null && sameName != type.type()) {
                throw new IllegalArgumentException("two commands are named " + type.type().getSimpleName() + ": "
                        + sameName.getName() + " and " + type.type().getName());
            }
            byTag[type.tag()] = type;
            byClass.computeIfAbsent(type.type(), c -> new ArrayList<>()).add(type);
        }
    }

    /** Whether this codec knows the command's type. */
    public boolean knows(Command command) {
        return byClass.containsKey(command.getClass());
    }

    public void write(Command command, DataOutput out) throws IOException {
        List<CommandType<?>> encodings = byClass.get(command.getClass());
        if (encodings == null) {
            throw new IllegalArgumentException("no encoding for " + command.getClass().getName());
        }
        for (CommandType<?> type : encodings) {
            if (type.carries(command)) {
                out.writeByte(type.tag());
                type.writeFields(command, out);
                return;
            }
        }
        throw new IllegalArgumentException("no encoding of " + command.getClass().getSimpleName() + " carries " + command);
    }

    /** @throws CommandFormatException for an unknown tag or a damaged field */
    public Command read(DataInput in) throws IOException {
        int tag = in.readUnsignedByte();
        CommandType<?> type = byTag[tag];
        if (type == null) {
            throw new CommandFormatException("unknown command type " + tag + " in log entry");
        }
        return type.reader().read(in);
    }

    /** One command on its own, as {@link #write} writes it. */
    public byte[] encode(Command command) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(48);
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            write(command, out);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a ByteArrayOutputStream does not fail
        }
        return bytes.toByteArray();
    }

    /** The command {@link #encode} wrote; every byte must belong to it. */
    public Command decode(byte[] bytes) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
        try {
            Command command = read(in);
            if (in.available() > 0) {
                throw new CommandFormatException(in.available() + " bytes after the command");
            }
            return command;
        } catch (EOFException e) {
            throw new CommandFormatException("command is truncated");
        }
    }
}
