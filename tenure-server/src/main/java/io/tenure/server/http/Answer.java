package io.tenure.server.http;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** A successful answer: its status and JSON body. */
record Answer(int status, ObjectNode body) {
    static Answer ok(ObjectNode body) {
        return new Answer(200, body);
    }
}
