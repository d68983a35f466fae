package io.tenure.server.text;

import io.tenure.testing.TenureCluster;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/** What the text-protocol tests share: one in-process member per test, and the connections a test opens, closed after it. */
abstract class TextMemberTest {
    @TempDir
    Path dir;

    TenureCluster cluster;
    private final List<TextWire> wires = new ArrayList<>();

    @AfterEach
    void closeAll() throws IOException {
        for (TextWire wire : wires) {
            wire.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /** Starts the member with its text settings changed by {@code text}. */
    void start(UnaryOperator<TextSettings> text) {
        cluster = TenureCluster.builder().members(1).dataDir(dir.resolve("member")).config(c -> c.withText(text.apply(c.text()))).start();
    }

    /** A new connection to the member's text port, closed after the test. */
    TextWire connect() throws IOException {
        TextWire wire = TextWire.open(cluster.textPort(0));
        wires.add(wire);
        return wire;
    }
}
