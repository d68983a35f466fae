package io.tenure.server.grpc;

import com.google.protobuf.ByteString;
import io.grpc.stub.ServerCallStreamObserver;
import io.tenure.proto.v1.ResponseHeader;
import io.tenure.proto.v1.SnapshotChunk;
import io.tenure.server.Member;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * One {@code SnapshotSave} call: copies the applied state, as a snapshot holds it (the core's
 * format with its CRC), into a temporary file under the state machine's read lock, so the copy
 * is of one applied index; then sends the file in chunks as fast as the client reads them (gRPC
 * flow control, so a slow client costs no memory) and deletes it. The first chunk says what the
 * copy is: revision, applied index and term, size and SHA-256.
 */
final class SnapshotSender {
    private static final Logger LOG = LoggerFactory.getLogger(SnapshotSender.class);
    static final int CHUNK_BYTES = 256 * 1024;

    private final Member member;
    private final ServerCallStreamObserver<SnapshotChunk> call;
    /** Guarded by this. */
    private Path file;
    private InputStream in;
    private SnapshotChunk.Builder first;
    private long offset;
    private boolean finished;

    /** Must be made during the service method's call: gRPC takes its handlers only then. */
    SnapshotSender(Member member, ServerCallStreamObserver<SnapshotChunk> call) {
        this.member = member;
        this.call = call;
        call.setOnReadyHandler(this::pump);
        call.setOnCancelHandler(this::cancelled);
    }

    /** Takes the copy and starts sending. Blocking (disk I/O): call it off the gRPC and Raft threads. */
    void start(ResponseHeader header) {
        Path copy = null;
        try {
            copy = Files.createTempFile("tenure-backup-", ".snapshot");
            MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
            Path target = copy;
            SnapshotChunk.Builder description = member.stateMachine().read(state -> {
                // Under the read lock: no entry is applied while the state is written, so the copy,
                // its revision and the applied index all describe the same moment.
                var applied = member.stateMachine().applied();
                try (OutputStream out = new DigestOutputStream(new BufferedOutputStream(Files.newOutputStream(target), 1 << 16), sha256)) {
                    state.writeSnapshot(out);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return SnapshotChunk.newBuilder()
                        .setRevision(state.revision())
                        .setAppliedIndex(applied == null ? -1 : applied.index())
                        .setAppliedTerm(applied == null ? 0 : applied.term());
            });
            description.setHeader(header.toBuilder().setRevision(description.getRevision()))
                    .setTotalBytes(Files.size(copy))
                    .setSha256(ByteString.copyFrom(sha256.digest()))
                    .setMemberName(member.memberName());
            synchronized (this) {
                if (finished) {
                    Files.deleteIfExists(copy);
                    return;
                }
                file = copy;
                in = Files.newInputStream(copy);
                first = description;
            }
            LOG.info("event=backup_started revision={} applied_index={} bytes={}", description.getRevision(),
                    description.getAppliedIndex(), description.getTotalBytes());
            pump();
        } catch (IOException | NoSuchAlgorithmException | RuntimeException e) {
            Throwable cause = e instanceof UncheckedIOException u ? u.getCause() : e;
            if (copy != null) {
                deleteQuietly(copy);
            }
            fail(cause);
        }
    }

    /** Ends the call with {@code error} (a failed read barrier, a failed copy). */
    synchronized void fail(Throwable error) {
        if (finished) {
            return;
        }
        finished = true;
        closeAndDelete();
        if (!call.isCancelled()) {
            call.onError(Statuses.of(error));
        }
    }

    /** Sends chunks while the client can take them; gRPC calls it again when it can take more. */
    private synchronized void pump() {
        if (finished || in == null) {
            return;
        }
        try {
            while (call.isReady()) {
                byte[] data = in.readNBytes(CHUNK_BYTES);
                if (data.length == 0 && first == null) {
                    finished = true;
                    closeAndDelete();
                    call.onCompleted();
                    LOG.info("event=backup_sent bytes={}", offset);
                    return;
                }
                SnapshotChunk.Builder chunk = first != null ? first : SnapshotChunk.newBuilder();
                first = null;
                call.onNext(chunk.setOffset(offset).setData(ByteString.copyFrom(data)).build());
                offset += data.length;
            }
        } catch (IOException | RuntimeException e) {
            finished = true;
            closeAndDelete();
            if (!call.isCancelled()) {
                call.onError(Statuses.of(e));
            }
        }
    }

    private synchronized void cancelled() {
        finished = true;
        closeAndDelete();
    }

    private void closeAndDelete() {
        if (in != null) {
            try {
                in.close();
            } catch (IOException e) {
                LOG.debug("event=backup_close_failed reason=\"{}\"", e.toString());
            }
            in = null;
        }
        if (file != null) {
            deleteQuietly(file);
            file = null;
        }
    }

    private static void deleteQuietly(Path path) {
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            LOG.warn("event=backup_cleanup_failed file={} reason=\"{}\"", path, e.toString());
        }
    }
}
