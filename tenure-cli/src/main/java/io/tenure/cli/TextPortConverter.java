package io.tenure.cli;

import io.tenure.server.text.TextSettings;
import picocli.CommandLine.ITypeConverter;

/** {@code --text-port}: a port, 0 for a free one, or {@code off}. */
final class TextPortConverter implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String text) {
        if (text.strip().equalsIgnoreCase("off")) {
            return TextSettings.OFF;
        }
        return new PortConverter().convert(text);
    }
}
