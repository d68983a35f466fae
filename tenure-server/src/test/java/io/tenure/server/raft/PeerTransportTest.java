package io.tenure.server.raft;

import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.RaftConfigKeys;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PeerTransportTest {
    @Test
    void aSnapshotIsSentWhenTheEntryBeforeTheFollowersNextIsPurgedAndTheSnapshotIsAhead() {
        // Log 13..117 after purging up to the snapshot at 100; the follower's log ends at 12.
        assertThat(PeerTransport.previousEntryPurged(13, 118, false, 100)).isTrue();
    }

    @Test
    void noSnapshotWhenEntriesCanBeSent() {
        assertThat(PeerTransport.previousEntryPurged(13, 118, true, 100)).as("previous entry still in the log").isFalse();
        assertThat(PeerTransport.previousEntryPurged(101, 118, false, 100)).as("previous entry is the snapshot's last").isFalse();
        assertThat(PeerTransport.previousEntryPurged(118, 118, false, 100)).as("follower caught up").isFalse();
        assertThat(PeerTransport.previousEntryPurged(13, 118, false, -1)).as("no snapshot").isFalse();
        assertThat(PeerTransport.previousEntryPurged(0, 118, false, 100)).as("follower with an empty log").isFalse();
        assertThat(PeerTransport.previousEntryPurged(105, 118, false, 100)).as("snapshot behind the follower").isFalse();
    }

    @Test
    void ratisFindsTheTransportByItsName() {
        RaftProperties properties = new RaftProperties();
        RaftConfigKeys.Rpc.setType(properties, new PeerTransport());
        assertThat(RaftConfigKeys.Rpc.type(properties, s -> { })).isInstanceOf(PeerTransport.class);
    }
}
