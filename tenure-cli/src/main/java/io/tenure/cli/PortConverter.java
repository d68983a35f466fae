package io.tenure.cli;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** A TCP port number, 0 to 65535 (0 picks a free port); the message says what a port is. */
final class PortConverter implements ITypeConverter<Integer> {
    @Override
    public Integer convert(String text) {
        String value = text.strip();
        int port;
        try {
            port = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new TypeConversionException("'" + text + "' is not a port: use a number from 0 to 65535");
        }
        if (port < 0 || port > 65535) {
            throw new TypeConversionException("'" + text + "' is not a port: use a number from 0 to 65535");
        }
        return port;
    }
}
