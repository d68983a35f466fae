package io.tenure.server.text;

/** One request of the text protocol: its three lines, every CR already removed. */
public record TextRequest(String command, String key, String arg) {}
