package io.tenure.it;

import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.tenure.proto.v1.Event;
import io.tenure.proto.v1.WatchRequest;
import io.tenure.proto.v1.WatchResponse;
import io.tenure.testing.Await;
import io.tenure.testing.MemberProcess;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * One raw {@code Watch} stream to one member, recording every event with the monotonic time at
 * which it arrived here.
 */
final class Watcher implements AutoCloseable {
    /** An event and when this JVM received it ({@link System#nanoTime()}). */
    record Seen(Event event, long atNanos) {
        String key() {
            return event.getKv().getKey().toString(StandardCharsets.UTF_8);
        }

        long revision() {
            return event.getKv().getModRevision();
        }

        boolean isPut() {
            return event.getType() == Event.EventType.PUT;
        }

        @Override
        public String toString() {
            return event.getType() + " " + key() + " rev " + revision() + " lease " + event.getKv().getLease()
                    + " holder '" + event.getKv().getHolder() + "'";
        }
    }

    private final String description;
    private final List<Seen> events = new CopyOnWriteArrayList<>();
    private volatile ClientCallStreamObserver<WatchRequest> requests;
    private volatile boolean created;
    private volatile long compactRevision;
    private volatile boolean canceled;
    private volatile String cancelReason = "";
    private volatile Throwable error;
    private volatile boolean completed;

    private Watcher(String description) {
        this.description = description;
    }

    /** Watches {@code key} (a prefix when {@code prefix}) on {@code member} from {@code startRevision} (0 = from now). */
    static Watcher open(MemberProcess member, String key, boolean prefix, long startRevision) {
        Watcher watcher = new Watcher("watch of " + key + (prefix ? "*" : "") + " on " + member.name() + " from revision " + startRevision);
        member.async().watch(new ClientResponseObserver<WatchRequest, WatchResponse>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<WatchRequest> stream) {
                watcher.requests = stream;
            }

            @Override
            public void onNext(WatchResponse response) {
                long now = System.nanoTime();
                if (response.getCreated()) {
                    watcher.created = true;
                }
                if (response.getCompactRevision() > 0) {
                    watcher.compactRevision = response.getCompactRevision();
                }
                if (response.getCanceled()) {
                    watcher.canceled = true;
                    watcher.cancelReason = response.getCancelReason();
                }
                for (Event event : response.getEventsList()) {
                    watcher.events.add(new Seen(event, now));
                }
            }

            @Override
            public void onError(Throwable t) {
                watcher.error = t;
            }

            @Override
            public void onCompleted() {
                watcher.completed = true;
            }
        });
        watcher.requests.onNext(WatchRequest.newBuilder().setKey(key).setPrefix(prefix).setStartRevision(startRevision)
                .setWatchId(1).build());
        return watcher;
    }

    /** Waits until the member confirmed the watch (or the stream ended, which the caller then sees). */
    Watcher awaitCreated(Duration limit) {
        Await.PROCESSES.until(description + " is created", limit, () -> created || !events.isEmpty() || ended());
        return this;
    }

    /** Waits for the first event (from the start) that matches; fails if the stream ends first. */
    Seen await(String what, Duration limit, Predicate<Seen> match) {
        return Await.PROCESSES.value(what + " (" + description + ")", limit, () -> {
            for (Seen seen : events) {
                if (match.test(seen)) {
                    return seen;
                }
            }
            if (ended()) {
                throw new AssertionError(description + " ended before " + what + ": " + endReason());
            }
            return null;
        });
    }

    List<Seen> events() {
        return new ArrayList<>(events);
    }

    long compactRevision() {
        return compactRevision;
    }

    /** The stream failed, completed or was cancelled by the server. */
    boolean ended() {
        return error != null || completed || canceled;
    }

    String endReason() {
        if (error != null) {
            return "error " + error;
        }
        if (canceled) {
            return "cancelled: '" + cancelReason + "'" + (compactRevision > 0 ? " (compact revision " + compactRevision + ")" : "");
        }
        return completed ? "completed by the server" : "still open";
    }

    @Override
    public void close() {
        ClientCallStreamObserver<WatchRequest> stream = requests;
        if (stream != null && !ended()) {
            stream.cancel("the test is done watching", null);
        }
    }

    @Override
    public String toString() {
        return description;
    }
}
