package io.tenure.core.kernel;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.function.Predicate;

/**
 * How one command record is written to the log: its type tag (one byte, unique across every
 * primitive, and never reused: old logs name their commands by it) and its fields.
 *
 * <p>A command that gains a field is written under a new tag. Its old encoding stays, as an
 * {@link #older} type: logs written before still replay, and a command whose new field is unset
 * is still written the old way, so that members of the previous release, during a rolling
 * upgrade, read every entry that does not use the new field.
 */
public record CommandType<C extends Command>(int tag, Class<C> type, Writer<C> writer, Reader<C> reader, Predicate<C> carries) {

    public CommandType {
        if (tag < 1 || tag > 255) {
            throw new IllegalArgumentException("a command tag is 1 to 255, got " + tag);
        }
    }

    /** The encoding of {@code type}, for every command of it. */
    public CommandType(int tag, Class<C> type, Writer<C> writer, Reader<C> reader) {
        this(tag, type, writer, reader, command -> true);
    }

    /**
     * An older encoding of {@code type}: always read, and written for the commands it
     * {@code carries} (those that leave the newer fields unset); the others take the newer one.
     */
    public static <C extends Command> CommandType<C> older(int tag, Class<C> type, Writer<C> writer, Reader<C> reader,
                                                           Predicate<C> carries) {
        return new CommandType<>(tag, type, writer, reader, carries);
    }

    boolean carries(Command command) {
        return carries.test(type.cast(command));
    }

    @FunctionalInterface
    public interface Writer<C> {
        void write(C command, DataOutput out) throws IOException;
    }

    @FunctionalInterface
    public interface Reader<C> {
        C read(DataInput in) throws IOException;
    }

    void writeFields(Command command, DataOutput out) throws IOException {
        writer.write(type.cast(command), out);
    }
}
