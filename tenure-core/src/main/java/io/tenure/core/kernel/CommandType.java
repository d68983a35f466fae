package io.tenure.core.kernel;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;

/**
 * How one command record is written to the log: its type tag (one byte, unique across every
 * primitive, and never reused: old logs name their commands by it) and its fields.
 */
public record CommandType<C extends Command>(int tag, Class<C> type, Writer<C> writer, Reader<C> reader) {

    public CommandType {
        if (tag < 1 || tag > 255) {
            throw new IllegalArgumentException("a command tag is 1 to 255, got " + tag);
        }
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
