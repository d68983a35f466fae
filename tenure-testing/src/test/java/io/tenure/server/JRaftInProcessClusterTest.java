package io.tenure.server;

/** {@link InProcessClusterTest}'s tests with the members on SOFAJRaft. */
class JRaftInProcessClusterTest extends InProcessClusterTest {
    @Override
    protected RaftEngine engine() {
        return RaftEngine.JRAFT;
    }
}
