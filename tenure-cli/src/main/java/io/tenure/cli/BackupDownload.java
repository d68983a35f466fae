package io.tenure.cli;

import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.tenure.proto.v1.ClusterServiceGrpc;
import io.tenure.proto.v1.SnapshotChunk;
import io.tenure.proto.v1.SnapshotSaveRequest;
import io.tenure.server.SnapshotRestore;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Fetches a backup ({@code SnapshotSave}) from the first member that serves one and writes it to a
 * file atomically: into a temporary file beside it, checked (size, SHA-256, the snapshot's own
 * format and CRC), forced to disk, renamed over the target, and the directory forced. A member
 * that is down, has no leader or dies during the transfer passes the turn to the next endpoint,
 * round the list with backoff until {@code requestTimeout}; anything else is an error at once.
 */
final class BackupDownload {
    private static final Set<Status.Code> RETRYABLE = Set.of(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED,
            Status.Code.ABORTED, Status.Code.CANCELLED);
    private static final long FIRST_BACKOFF_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long MAX_BACKOFF_NANOS = TimeUnit.SECONDS.toNanos(1);

    /** A saved backup: what the member said it is, and the SHA-256 checked against it. */
    record Saved(long revision, long appliedIndex, long bytes, String sha256, String member) {}

    private final List<String> endpoints;
    private final Duration requestTimeout;
    private final Duration transferTimeout;

    BackupDownload(List<String> endpoints, Duration requestTimeout, Duration transferTimeout) {
        this.endpoints = List.copyOf(endpoints);
        this.requestTimeout = requestTimeout;
        this.transferTimeout = transferTimeout;
    }

    /** @throws IOException naming what failed; {@code file} is then as it was */
    Saved saveTo(Path file) throws IOException {
        Path target = file.toAbsolutePath().normalize();
        Path dir = target.getParent();
        Files.createDirectories(dir);
        Path tmp = Files.createTempFile(dir, "." + target.getFileName() + ".", ".tmp");
        try {
            Saved saved = download(tmp);
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
                d.force(true);
            }
            return saved;
        } finally {
            Files.deleteIfExists(tmp);
        }
    }

    private Saved download(Path tmp) throws IOException {
        long deadline = System.nanoTime() + requestTimeout.toNanos();
        long backoff = FIRST_BACKOFF_NANOS;
        List<String> failures = new ArrayList<>();
        for (int attempt = 0; ; attempt++) {
            String endpoint = endpoints.get(attempt % endpoints.size());
            try {
                return downloadFrom(endpoint, tmp);
            } catch (StatusRuntimeException e) {
                String failure = endpoint + ": " + e.getStatus().getCode()
                        + (e.getStatus().getDescription() == null ? "" : " (" + e.getStatus().getDescription() + ")");
                if (!RETRYABLE.contains(e.getStatus().getCode())) {
                    throw new IOException("member " + failure + " refused the backup");
                }
                failures.add(failure);
            } catch (BadCopy e) {
                // A copy that fails its checks is not retried: something is wrong that another try would hide.
                throw new IOException("the backup from " + endpoint + " failed its checks: " + e.getMessage());
            }
            if (attempt % endpoints.size() == endpoints.size() - 1) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException("no member could send a backup within --request-timeout " + requestTimeout.toMillis()
                            + " ms (unavailable: " + String.join("; ", failures.subList(Math.max(0, failures.size() - endpoints.size()),
                            failures.size())) + ")");
                }
                LockSupport.parkNanos(backoff);
                backoff = Math.min(2 * backoff, MAX_BACKOFF_NANOS);
            }
        }
    }

    /** A copy that arrived whole but does not match what the member said, or is not a valid snapshot. */
    private static final class BadCopy extends Exception {
        BadCopy(String message) {
            super(message);
        }
    }

    private Saved downloadFrom(String endpoint, Path tmp) throws IOException, BadCopy {
        int colon = endpoint.lastIndexOf(':');
        String host = endpoint.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        ManagedChannel channel = Grpc.newChannelBuilderForAddress(host, Integer.parseInt(endpoint.substring(colon + 1)),
                InsecureChannelCredentials.create()).build();
        try {
            Iterator<SnapshotChunk> chunks = ClusterServiceGrpc.newBlockingStub(channel)
                    .withDeadlineAfter(transferTimeout.toMillis(), TimeUnit.MILLISECONDS)
                    .snapshotSave(SnapshotSaveRequest.getDefaultInstance());
            MessageDigest sha256 = sha256();
            SnapshotChunk first = null;
            long offset = 0;
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
                while (chunks.hasNext()) {
                    SnapshotChunk chunk = chunks.next();
                    if (first == null) {
                        first = chunk;
                    }
                    if (chunk.getOffset() != offset) {
                        throw new BadCopy("a chunk starts at byte " + chunk.getOffset() + ", expected " + offset);
                    }
                    ByteBuffer data = chunk.getData().asReadOnlyByteBuffer();
                    sha256.update(chunk.getData().asReadOnlyByteBuffer());
                    while (data.hasRemaining()) {
                        out.write(data);
                    }
                    offset += chunk.getData().size();
                }
                out.force(true);
            }
            if (first == null) {
                throw new BadCopy("the member sent nothing");
            }
            if (offset != first.getTotalBytes()) {
                throw new BadCopy("received " + offset + " bytes of " + first.getTotalBytes());
            }
            byte[] digest = sha256.digest();
            if (!Arrays.equals(digest, first.getSha256().toByteArray())) {
                throw new BadCopy("SHA-256 mismatch: received " + HexFormat.of().formatHex(digest) + ", the member sent "
                        + HexFormat.of().formatHex(first.getSha256().toByteArray()));
            }
            SnapshotRestore.Backup contents;
            try {
                contents = SnapshotRestore.check(tmp);
            } catch (IOException e) {
                throw new BadCopy(e.getMessage());
            }
            if (contents.revision() != first.getRevision()) {
                throw new BadCopy("the snapshot's revision is " + contents.revision() + ", the member said " + first.getRevision());
            }
            return new Saved(first.getRevision(), first.getAppliedIndex(), offset, HexFormat.of().formatHex(digest),
                    first.getMemberName());
        } finally {
            channel.shutdownNow();
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }
}
