package io.tenure.cli;

import io.tenure.client.LockMode;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.Locale;

/** How the client commands print what the server says. */
final class Formats {
    private Formats() {
    }

    /** Milliseconds as {@code 950ms}, {@code 9.5s}, {@code 12m30s}; {@code unknown} for a negative value. */
    static String millis(long ms) {
        if (ms < 0) {
            return "unknown";
        }
        if (ms < 1000) {
            return ms + "ms";
        }
        if (ms < 60_000) {
            return ms % 1000 == 0 ? ms / 1000 + "s" : String.format(Locale.ROOT, "%.3fs", ms / 1000.0).replaceAll("0+s$", "s");
        }
        long seconds = ms / 1000;
        long hours = seconds / 3600;
        long minutes = seconds % 3600 / 60;
        long rest = seconds % 60;
        return (hours > 0 ? hours + "h" : "") + (minutes > 0 ? minutes + "m" : "") + (rest > 0 ? rest + "s" : "");
    }

    /** A lock mode as the commands print it and pass it on: {@code read} or {@code write}. */
    static String mode(LockMode mode) {
        return mode.name().toLowerCase(Locale.ROOT);
    }

    /** Metadata as text when it is valid UTF-8 without control characters, else as hex ({@code 0x...}). */
    static String metadata(byte[] bytes) {
        if (bytes.length == 0) {
            return "";
        }
        try {
            String text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
            if (text.chars().noneMatch(c -> Character.isISOControl(c) && c != '\t')) {
                return text;
            }
        } catch (CharacterCodingException notText) {
            // Shown as hex below.
        }
        return "0x" + HexFormat.of().formatHex(bytes);
    }
}
