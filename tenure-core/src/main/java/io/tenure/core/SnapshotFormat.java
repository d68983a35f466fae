package io.tenure.core;

import io.tenure.core.TenureState.Lease;
import io.tenure.core.TenureState.Lock;
import io.tenure.core.TenureState.Release;
import io.tenure.core.TenureState.Waiter;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;
import java.util.zip.CheckedOutputStream;

/**
 * The byte layout of a state snapshot: a magic number, a format version, the state in a fixed
 * order (leases by id, locks by key, waiters in queue order, recent releases oldest first) and a
 * CRC32C of everything before it. Equal states give identical bytes.
 */
final class SnapshotFormat {
    static final int MAGIC = 0x544E5253; // "TNRS"
    /** 2 added the member endpoints; version 1 snapshots are still read. */
    static final int VERSION = 2;

    private SnapshotFormat() {}

    static void write(TenureState state, OutputStream target) throws IOException {
        CRC32C crc = new CRC32C();
        DataOutputStream out = new DataOutputStream(new CheckedOutputStream(new BufferedOutputStream(target, 1 << 16), crc));
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeLong(state.appliedPosition());
        out.writeLong(state.lastStamp());

        List<Lease> leases = new ArrayList<>(state.leaseMap().values());
        leases.sort((a, b) -> Long.compare(a.id, b.id));
        out.writeInt(leases.size());
        for (Lease lease : leases) {
            out.writeLong(lease.id);
            out.writeLong(lease.ttlMillis);
            writeString(out, lease.clientId);
            out.writeLong(lease.grantedAt);
            out.writeLong(lease.renewedAt);
        }

        out.writeInt(state.lockMap().size());
        for (Lock lock : state.lockMap().values()) {
            writeString(out, lock.key);
            out.writeLong(lock.createRevision);
            out.writeLong(lock.holder.id);
            writeBytes(out, lock.metadata);
            out.writeLong(lock.token);
            out.writeLong(lock.version);
            out.writeInt(lock.waiters.size());
            for (Waiter w : lock.waiters.values()) {
                out.writeLong(w.lease().id);
                writeBytes(out, w.metadata());
                out.writeLong(w.joinedAt());
            }
        }

        out.writeInt(state.recentReleaseMap().size());
        for (Map.Entry<Long, Release> e : state.recentReleaseMap().entrySet()) {
            out.writeLong(e.getKey());
            writeString(out, e.getValue().key());
            out.writeLong(e.getValue().leaseId());
            out.writeLong(e.getValue().nextToken());
        }

        out.writeInt(state.endpointMap().size());
        for (Map.Entry<String, String> e : state.endpointMap().entrySet()) {
            writeString(out, e.getKey());
            writeString(out, e.getValue());
        }
        out.flush();
        // The checksum itself is written past the checked stream.
        DataOutputStream tail = new DataOutputStream(target);
        tail.writeInt((int) crc.getValue());
        tail.flush();
    }

    static void read(TenureState state, InputStream source) throws IOException {
        CRC32C crc = new CRC32C();
        BufferedInputStream buffered = new BufferedInputStream(source, 1 << 16);
        DataInputStream in = new DataInputStream(new CheckedInputStream(buffered, crc));
        try {
            if (in.readInt() != MAGIC) {
                throw new SnapshotFormatException("not a Tenure snapshot (bad magic number)");
            }
            int version = in.readInt();
            if (version != VERSION && version != 1) {
                throw new SnapshotFormatException("snapshot format version " + version
                        + " is not supported by this build, which reads versions 1 to " + VERSION);
            }
            long appliedPosition = in.readLong();
            long lastStamp = in.readLong();

            Map<Long, Lease> leases = state.leaseMap();
            int leaseCount = count(in, "lease");
            for (int i = 0; i < leaseCount; i++) {
                long id = in.readLong();
                Lease lease = new Lease(id, in.readLong(), readString(in), in.readLong());
                lease.renewedAt = in.readLong();
                leases.put(id, lease);
            }

            int lockCount = count(in, "lock");
            for (int i = 0; i < lockCount; i++) {
                Lock lock = new Lock(readString(in), in.readLong());
                lock.holder = leaseFor(leases, in.readLong(), lock.key);
                lock.metadata = readBytes(in);
                lock.token = in.readLong();
                lock.version = in.readLong();
                lock.holder.held.add(lock.key);
                int waiterCount = count(in, "waiter");
                for (int w = 0; w < waiterCount; w++) {
                    Lease lease = leaseFor(leases, in.readLong(), lock.key);
                    lock.waiters.put(lease.id, new Waiter(lease, readBytes(in), in.readLong()));
                    lease.waiting.add(lock.key);
                }
                state.lockMap().put(lock.key, lock);
            }

            int releaseCount = count(in, "release");
            for (int i = 0; i < releaseCount; i++) {
                long token = in.readLong();
                state.recentReleaseMap().put(token, new Release(readString(in), in.readLong(), in.readLong()));
            }
            if (version >= 2) {
                int endpointCount = count(in, "member endpoint");
                for (int i = 0; i < endpointCount; i++) {
                    state.endpointMap().put(readString(in), readString(in));
                }
            }
            int expected = (int) crc.getValue();
            int stored = new DataInputStream(buffered).readInt();
            if (stored != expected) {
                throw new SnapshotFormatException("snapshot is corrupt: checksum mismatch");
            }
            if (buffered.read() != -1) {
                throw new SnapshotFormatException("snapshot is corrupt: unexpected bytes after the checksum");
            }
            state.restorePositions(appliedPosition, lastStamp);
        } catch (EOFException e) {
            throw new SnapshotFormatException("snapshot is truncated", e);
        }
    }

    private static Lease leaseFor(Map<Long, Lease> leases, long id, String key) throws SnapshotFormatException {
        Lease lease = leases.get(id);
        if (lease == null) {
            throw new SnapshotFormatException("snapshot is corrupt: lock '" + key + "' refers to unknown lease " + id);
        }
        return lease;
    }

    private static int count(DataInputStream in, String what) throws IOException {
        int n = in.readInt();
        if (n < 0) {
            throw new SnapshotFormatException("snapshot is corrupt: negative " + what + " count " + n);
        }
        return n;
    }

    private static void writeString(DataOutputStream out, String s) throws IOException {
        writeBytes(out, s.getBytes(StandardCharsets.UTF_8));
    }

    private static String readString(DataInputStream in) throws IOException {
        return new String(readBytes(in), StandardCharsets.UTF_8);
    }

    private static void writeBytes(DataOutputStream out, byte[] b) throws IOException {
        out.writeInt(b.length);
        out.write(b);
    }

    private static byte[] readBytes(DataInputStream in) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > Limits.MAX_METADATA_BYTES) {
            throw new SnapshotFormatException("snapshot is corrupt: field length " + n + " out of range");
        }
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }
}
