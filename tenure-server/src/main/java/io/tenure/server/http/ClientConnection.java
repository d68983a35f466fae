package io.tenure.server.http;

import io.javalin.http.Context;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.BufferUtil;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The connection of one HTTP request whose answer may wait (a list's pop), looked at to learn
 * whether its client went away before the answer. Jetty does not read a connection while its
 * request is handled asynchronously, so a client that closed its connection is noticed only by
 * reading: {@link #gone} reads at most one byte from it, without waiting. End of stream or a
 * reset means the client is gone. A byte read is the start of a request pipelined behind this
 * one: it cannot be put back, so the answer closes the connection ({@code Connection: close},
 * the client sends that request again) and the connection is not looked at any more.
 *
 * <p>Not after the answer: from then on Jetty reads the connection, so {@link #lastLook} is the
 * last read, and every look holds this object's lock.
 */
final class ClientConnection {
    private final Context ctx;
    private final EndPoint endPoint;
    private boolean gone;
    private boolean done;

    ClientConnection(Context ctx) {
        this.ctx = ctx;
        org.eclipse.jetty.server.Request request = org.eclipse.jetty.server.Request.getBaseRequest(ctx.req());
        this.endPoint = request == null ? null : request.getHttpChannel().getEndPoint();
    }

    /** Whether the client closed or reset the connection (once gone, always gone). */
    synchronized boolean gone() {
        if (gone || done || endPoint == null) {
            return gone;
        }
        if (!endPoint.isOpen() || endPoint.isInputShutdown()) {
            gone = true;
            return true;
        }
        try {
            ByteBuffer one = BufferUtil.allocate(1);
            int read = endPoint.fill(one);
            if (read < 0) {
                gone = true;
            } else if (read > 0) {
                done = true;
                ctx.header("Connection", "close");
            }
        } catch (IOException e) {
            gone = true;
        }
        return gone;
    }

    /** The last look, just before the answer is written: whether the client went away. */
    synchronized boolean lastLook() {
        boolean g = gone();
        done = true;
        return g;
    }
}
