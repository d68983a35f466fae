package io.tenure.core.kernel;

import io.tenure.core.SnapshotFormatException;

import java.io.DataInput;
import java.io.DataInputStream;
import java.io.DataOutput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The field encodings the log codec and the snapshot sections share: a length-prefixed string or
 * byte array (a null one is written empty), and a count that must not be negative. A length
 * over its bound is refused, so that a corrupt length cannot make a reader allocate gigabytes.
 */
public final class Wire {
    private Wire() {}

    public static void writeString(DataOutput out, String s) throws IOException {
        writeBytes(out, s == null ? null : s.getBytes(StandardCharsets.UTF_8));
    }

    public static String readString(DataInput in, int maxBytes) throws IOException {
        return new String(readBytes(in, maxBytes), StandardCharsets.UTF_8);
    }

    public static void writeBytes(DataOutput out, byte[] b) throws IOException {
        if (b == null) {
            out.writeInt(0);
            return;
        }
        out.writeInt(b.length);
        out.write(b);
    }

    /** @throws CommandFormatException for a negative length or one over {@code maxBytes} */
    public static byte[] readBytes(DataInput in, int maxBytes) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > maxBytes) {
            throw new CommandFormatException("field length " + n + " out of range");
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    /** A snapshot count: refused when negative. */
    public static int count(DataInputStream in, String what) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            throw new SnapshotFormatException("snapshot is corrupt: negative " + what + " count " + n);
        }
        return n;
    }
}
