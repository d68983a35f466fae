package io.tenure.core.kernel;

import io.tenure.core.SnapshotFormatException;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.HashSet;
import java.util.Set;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

/**
 * The byte layout of a state snapshot: a magic number, a format version, the applied position
 * and last stamp, the leases by id, then one section per primitive in their fixed order (its name,
 * its length, its bytes), and a CRC32C of everything before it. Equal states give identical bytes.
 *
 * <p>Versions 1 and 2 (written before the primitives had sections) are still read: their leases,
 * then the lock's part and the member endpoints' part one after the other, unframed, which is how
 * the primitives read them given the version. A section this build does not know was written by a
 * newer one and is refused; a primitive with no section (added since) starts empty.
 */
final class SnapshotFormat {
    static final int MAGIC = 0x544E5253; // "TNRS"
    /** 7: lease owners; 6: idle semaphores (and the position each became idle at); 5: locks in read mode (several holders); 4: the lock's acquire request ids; 3: sections per primitive; 2 added the member endpoints; 1 is the first. */
    static final int VERSION = 7;

    private SnapshotFormat() {}

    static void write(Kernel kernel, OutputStream target) throws IOException {
        CRC32C crc = new CRC32C();
        DataOutputStream out = new DataOutputStream(new CheckedOutputStream(new BufferedOutputStream(target, 1 << 16), crc));
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeLong(kernel.appliedPosition());
        out.writeLong(kernel.lastStamp());
        kernel.leases().write(out);
        out.writeInt(kernel.primitives().size());
        for (Primitive primitive : kernel.primitives()) {
            ByteArrayOutputStream section = new ByteArrayOutputStream(256);
            try (DataOutputStream sectionOut = new DataOutputStream(section)) {
                primitive.writeSnapshot(sectionOut);
            }
            Wire.writeString(out, primitive.kind().name());
            out.writeInt(section.size());
            section.writeTo(out);
        }
        out.flush();
        // The checksum itself is written past the checked stream.
        DataOutputStream tail = new DataOutputStream(target);
        tail.writeInt((int) crc.getValue());
        tail.flush();
    }

    static void read(Kernel kernel, InputStream source) throws IOException {
        CRC32C crc = new CRC32C();
        BufferedInputStream buffered = new BufferedInputStream(source, 1 << 16);
        DataInputStream in = new DataInputStream(new CheckedInputStream(buffered, crc));
        try {
            if (in.readInt() != MAGIC) {
                throw new SnapshotFormatException("not a Tenure snapshot (bad magic number)");
            }
            int version = in.readInt();
            if (version < 1 || version > VERSION) {
                throw new SnapshotFormatException("snapshot format version " + version
                        + " is not supported by this build, which reads versions 1 to " + VERSION);
            }
            long appliedPosition = in.readLong();
            long lastStamp = in.readLong();
            kernel.leases().read(in, version);
            if (version < 3) {
                for (Primitive primitive : kernel.primitives()) {
                    primitive.readSnapshot(in, version, kernel.leases());
                }
            } else {
                readSections(kernel, in, version);
            }
            int expected = (int) crc.getValue();
            int stored = new DataInputStream(buffered).readInt();
            if (stored != expected) {
                throw new SnapshotFormatException("snapshot is corrupt: checksum mismatch");
            }
            if (buffered.read() != -1) {
                throw new SnapshotFormatException("snapshot is corrupt: unexpected bytes after the checksum");
            }
            kernel.restorePositions(appliedPosition, lastStamp);
        } catch (EOFException e) {
            throw new SnapshotFormatException("snapshot is truncated", e);
        } catch (CommandFormatException e) {
            throw new SnapshotFormatException("snapshot is corrupt: " + e.getMessage(), e);
        }
    }

    private static void readSections(Kernel kernel, DataInputStream in, int version) throws IOException {
        int sections = Wire.count(in, "section");
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < sections; i++) {
            String name = Wire.readString(in, 256);
            int length = Wire.count(in, "section length");
            byte[] bytes = new byte[length];
            in.readFully(bytes);
            Primitive primitive = kernel.primitives().stream().filter(p -> p.kind().name().equals(name)).findFirst().orElse(null);
            if (primitive == null) {
                throw new SnapshotFormatException("snapshot has a section '" + name
                        + "' that this build does not know (was it written by a newer one?)");
            }
            if (!seen.add(name)) {
                throw new SnapshotFormatException("snapshot is corrupt: section '" + name + "' appears twice");
            }
            DataInputStream section = new DataInputStream(new ByteArrayInputStream(bytes));
            try {
                primitive.readSnapshot(section, version, kernel.leases());
            } catch (EOFException e) {
                throw new SnapshotFormatException("snapshot is corrupt: section '" + name + "' is cut short", e);
            }
            if (section.available() > 0) {
                throw new SnapshotFormatException("snapshot is corrupt: " + section.available()
                        + " bytes left over in section '" + name + "'");
            }
        }
    }
}
