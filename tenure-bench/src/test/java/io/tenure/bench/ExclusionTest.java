package io.tenure.bench;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ExclusionTest {
    @Test
    void aSecondHolderOfALockIsAnOverlap() {
        Exclusion exclusion = new Exclusion();
        exclusion.enter("k");
        exclusion.exit("k");
        exclusion.enter("k");
        assertThat(exclusion.overlaps()).isZero();
        exclusion.enter("k");
        assertThat(exclusion.overlaps()).isEqualTo(1);
        assertThat(exclusion.peak("k")).isEqualTo(2);
    }

    @Test
    void aSemaphoreCountsItsHoldersAgainstItsLimit() {
        Exclusion exclusion = new Exclusion();
        for (int i = 0; i < 8; i++) {
            exclusion.enter("s", 8);
        }
        assertThat(exclusion.overlaps()).isZero();
        assertThat(exclusion.peak("s")).isEqualTo(8);

        exclusion.exit("s");
        exclusion.enter("s", 8); // back to 8: still within the limit
        assertThat(exclusion.overlaps()).isZero();

        exclusion.enter("s", 8); // a ninth at once
        assertThat(exclusion.overlaps()).isEqualTo(1);
        assertThat(exclusion.peak("s")).isEqualTo(9);
    }

    @Test
    void readersShareAReadWriteLockAndAWriterSharesItWithNoOne() {
        Exclusion exclusion = new Exclusion();
        exclusion.enterRead("rw");
        exclusion.enterRead("rw");
        exclusion.enterRead("rw");
        assertThat(exclusion.overlaps()).isZero();
        assertThat(exclusion.peak("rw")).isEqualTo(3);
        exclusion.exitRead("rw");
        exclusion.exitRead("rw");
        exclusion.exitRead("rw");

        exclusion.enterWrite("rw");
        assertThat(exclusion.overlaps()).isZero();
        exclusion.exitWrite("rw");
        exclusion.enterWrite("rw"); // the next writer, after the first left
        assertThat(exclusion.overlaps()).isZero();
        exclusion.exitWrite("rw");
    }

    @Test
    void aWriterBesideAReaderOrAWriterIsAnOverlapEitherWay() {
        Exclusion readerFirst = new Exclusion();
        readerFirst.enterRead("rw");
        readerFirst.enterWrite("rw");
        assertThat(readerFirst.overlaps()).isEqualTo(1);

        Exclusion writerFirst = new Exclusion();
        writerFirst.enterWrite("rw");
        writerFirst.enterRead("rw");
        assertThat(writerFirst.overlaps()).isEqualTo(1);
        writerFirst.exitRead("rw");
        writerFirst.enterWrite("rw");
        assertThat(writerFirst.overlaps()).isEqualTo(2);
        writerFirst.exitWrite("rw");
        writerFirst.exitWrite("rw");
        writerFirst.enterRead("rw"); // both writers gone: a reader alone again
        assertThat(writerFirst.overlaps()).isEqualTo(2);
    }

    @Test
    void keysAreCountedApart() {
        Exclusion exclusion = new Exclusion();
        exclusion.enter("a");
        exclusion.enter("b");
        exclusion.enter("s", 2);
        exclusion.enter("s", 2);
        assertThat(exclusion.overlaps()).isZero();
        assertThat(exclusion.peak("a")).isEqualTo(1);
        assertThat(exclusion.peak("never")).isZero();
    }
}
