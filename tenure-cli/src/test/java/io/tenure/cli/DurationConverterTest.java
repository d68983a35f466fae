package io.tenure.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.TypeConversionException;

class DurationConverterTest {
    private final DurationConverter converter = new DurationConverter();

    @ParameterizedTest
    @CsvSource({
        "500ms, PT0.5S",
        "10s, PT10S",
        "2m, PT2M",
        "1h, PT1H",
        "1m30s, PT1M30S",
        "1.5s, PT1.5S",
        "0, PT0S",
        "0s, PT0S",
        "' 10S ', PT10S",
    })
    void readsNumbersWithUnits(String text, Duration expected) {
        assertThat(converter.convert(text)).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"10", "10x", "s", "", "ms10", "1.s", "10 s", "PT10S", "forever"})
    void refusesWhatIsNotADurationWithTheExpectedForm(String text) {
        assertThatThrownBy(() -> converter.convert(text))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageContaining("500ms, 10s, 2m");
    }

    @Test
    void refusesNegativeDurations() {
        assertThatThrownBy(() -> converter.convert("-5s"))
                .isInstanceOf(TypeConversionException.class)
                .hasMessageContaining("negative");
    }

    @Test
    void refusesWhatDoesNotFitInADuration() {
        assertThatThrownBy(() -> converter.convert("99999999999999999h")).isInstanceOf(TypeConversionException.class);
        assertThatThrownBy(() -> converter.convert("0.0000000001s")).isInstanceOf(TypeConversionException.class);
    }

    @Test
    void foreverMeansNoLimitWhereAllowed() {
        DurationConverter.OrForever orForever = new DurationConverter.OrForever();
        assertThat(orForever.convert("forever")).isNull();
        assertThat(orForever.convert("3s")).isEqualTo(Duration.ofSeconds(3));
    }
}
