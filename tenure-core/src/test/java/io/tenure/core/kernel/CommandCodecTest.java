package io.tenure.core.kernel;

import io.tenure.core.TenureState;
import io.tenure.core.barrier.BarrierAwait;
import io.tenure.core.barrier.BarrierCancel;
import io.tenure.core.barrier.DoubleBarrierEnter;
import io.tenure.core.barrier.DoubleBarrierLeave;
import io.tenure.core.barrier.DoubleBarrierWithdraw;
import io.tenure.core.election.ElectionCampaign;
import io.tenure.core.election.ElectionCancel;
import io.tenure.core.election.ElectionProclaim;
import io.tenure.core.election.ElectionResign;
import io.tenure.core.counter.CounterAdd;
import io.tenure.core.counter.CounterCompareAndSet;
import io.tenure.core.counter.CounterSet;
import io.tenure.core.kv.KvCompareAndSet;
import io.tenure.core.kv.KvDelete;
import io.tenure.core.kv.KvExpire;
import io.tenure.core.kv.KvPut;
import io.tenure.core.list.ListAbandon;
import io.tenure.core.list.ListCancel;
import io.tenure.core.list.ListPop;
import io.tenure.core.list.ListPush;
import io.tenure.core.list.ListReturn;
import io.tenure.core.list.ListWithdraw;
import io.tenure.core.signal.SignalListen;
import io.tenure.core.signal.SignalPublish;
import io.tenure.core.signal.SignalUnlisten;
import io.tenure.core.latch.LatchAwait;
import io.tenure.core.latch.LatchCancel;
import io.tenure.core.latch.LatchCountDown;
import io.tenure.core.latch.LatchSetCount;
import io.tenure.core.lock.LockAcquire;
import io.tenure.core.lock.LockCancel;
import io.tenure.core.lock.LockDowngrade;
import io.tenure.core.lock.LockRelease;
import io.tenure.core.member.MemberEndpoint;
import io.tenure.core.semaphore.SemaphoreAcquire;
import io.tenure.core.semaphore.SemaphoreCancel;
import io.tenure.core.semaphore.SemaphoreRelease;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The log encoding of every command: one tag per type, never reused, and a faithful round trip. */
class CommandCodecTest {
    private static final CommandCodec CODEC = TenureState.CODEC;

    /** One of every command type, with fields that are not defaults. */
    static final List<Command> EVERY_COMMAND = List.of(
            new LeaseGrant(7, 10_000, "client \u00e9", "ops"),
            new LeaseRenew(new long[] {1, 2, Long.MAX_VALUE}),
            new LeaseRevoke(8),
            new LeaseExpire(9, 123L << 16),
            ReadBarrier.INSTANCE,
            new IdleForget(List.of(new IdleName("semaphore", "pool/\u9396", 88L << 16), new IdleName("barrier", "gate", 1))),
            new LockAcquire("jobs/\u9396", 7, new byte[] {0, -1, 3}, true, -5, true),
            new LockRelease("jobs/a", 7, 99L << 16),
            new LockCancel("jobs/b", 7, 77),
            new MemberEndpoint("n1", "127.0.0.1:7070"),
            new SemaphoreAcquire("pool/\u9396", 7, 8, 3, true, -9),
            new SemaphoreRelease("pool/a", 7, 98L << 16),
            new SemaphoreCancel("pool/b", 7, 5),
            new LockDowngrade("jobs/c", 7, 97L << 16),
            new ElectionCampaign("leader/\u9396", 7, new byte[] {9, -9}, true, 33),
            new ElectionProclaim("leader/a", 7, 96L << 16, new byte[] {1, 2}),
            new ElectionResign("leader/a", 7, 95L << 16),
            new ElectionCancel("leader/b", 7, 34),
            new BarrierAwait("gate/\u9396", 7, 5, true, 35),
            new BarrierCancel("gate/a", 7, 36),
            new DoubleBarrierEnter("phase/\u9396", 7, 4, true, 37),
            new DoubleBarrierLeave("phase/a", 7, true),
            new DoubleBarrierWithdraw("phase/b", 7, 38),
            new LatchSetCount("done/\u9396", 1_000_000, -37),
            new LatchCountDown("done/a", 38),
            new LatchAwait("done/b", 7, true, 39),
            new LatchCancel("done/b", 7, 40),
            new CounterAdd("seq/\u9396", Long.MIN_VALUE, 41),
            new CounterSet("seq/a", -1, -42),
            new CounterCompareAndSet("seq/b", Long.MAX_VALUE, 0, 43),
            new KvPut("cfg/\u9396", new byte[] {4, -4}, 7, 0, 41),
            new KvCompareAndSet("cfg/a", -1, new byte[0], new byte[] {5}, 0, 86_400_000, 42),
            new KvDelete("cfg/b", 93L << 16, 43),
            new KvExpire("cfg/c", 92L << 16),
            new ListPush("q/\u9396", new byte[] {1, -1}, true, 44),
            new ListPop("q/a", false, 7, true, -45),
            new ListCancel("q/a", 7, 46),
            new ListReturn("q/b", new byte[0], false, 47),
            new ListAbandon("q/c", 8, 48),
            new ListWithdraw("q/d", 9, 53),
            new SignalListen(-49, 9, "orders.*.>", "workers", 52),
            new SignalUnlisten(50, 9),
            new SignalPublish("orders.\u9396", new byte[] {6, -6}, 51),
            new Txn(List.of(TxnCompare.ofValue("kv", "cfg/\u9396", TxnCompare.Relation.NOT_EQUAL, new byte[] {7, -7}),
                    TxnCompare.of("counter", "seq/a", TxnCompare.Target.VALUE, TxnCompare.Relation.GREATER, -3),
                    new TxnCompare("kv", "cfg/a", null, null, 5, null)),
                    List.of(new KvPut("cfg/a", new byte[] {8}, 0, 1_000, 0), new CounterAdd("seq/a", -1, 0)),
                    List.of(new KvDelete("cfg/b", -1, 0)), -53),
            new LeaseRetime(10, 33_000),
            new io.tenure.core.access.UserAdd("ops@\u9396", "pbkdf2-sha256$120000$c2FsdA==$aGFzaA=="),
            new io.tenure.core.access.UserDelete("ops"),
            new io.tenure.core.access.UserPassword("ops", "pbkdf2-sha256$1$AA==$AA=="),
            new io.tenure.core.access.UserGrantRole("ops", "root"),
            new io.tenure.core.access.UserRevokeRole("ops", "readers"),
            new io.tenure.core.access.RoleAdd("readers"),
            new io.tenure.core.access.RoleDelete("readers"),
            new io.tenure.core.access.RoleGrant("readers", "kv", "cfg/\u9396", io.tenure.core.access.Level.ADMIN),
            new io.tenure.core.access.RoleRevoke("readers", "*", ""),
            io.tenure.core.access.AuthEnable.INSTANCE,
            io.tenure.core.access.AuthDisable.INSTANCE,
            new io.tenure.core.access.TokenIssue("ops", "0123456789abcdef0123456789abcdef", -1),
            new io.tenure.core.access.TokenRevoke("ops", "fedcba9876543210"),
            new io.tenure.core.scope.ScopeAcquire(7, List.of(
                    new io.tenure.core.scope.ScopeRequest(new io.tenure.core.scope.LockScope.ByteRange(42, 0, Long.MAX_VALUE), true),
                    new io.tenure.core.scope.ScopeRequest(new io.tenure.core.scope.LockScope.Path("/data/\u9396"), false),
                    new io.tenure.core.scope.ScopeRequest(new io.tenure.core.scope.LockScope.Inode(43), true)),
                    new byte[] {1, -1}, true, 41),
            new io.tenure.core.scope.ScopeRelease(7, 99),
            new io.tenure.core.scope.ScopeCancel(7, 41));

    /** Tags are what old logs name their commands by: changing one would misread every log written before. */
    static final List<Integer> TAGS = List.of(36, 2, 3, 4, 9, 31, 15, 7, 11, 8, 12, 13, 14, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 23, 24, 25, 26, 32, 33, 34, 40, 41, 42, 43, 50, 51, 52, 53, 54, 55, 60, 61, 62, 70, 35,
            90, 91, 92, 93, 94, 95, 96, 97, 98, 99, 100, 101, 102, 110, 111, 112);
    /** Tags of older encodings, read from old logs, and written for commands that leave the newer fields unset. */
    static final List<Integer> OLDER_TAGS = List.of(1, 5, 6, 10);

    /** A lease granted without an owner (authentication off) is written as before owners came (tag 1), for members of the previous release. */
    @Test
    void aLeaseWithoutAnOwnerKeepsTheEncodingFromBeforeOwners() throws IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.DataOutputStream out = new java.io.DataOutputStream(bytes);
        out.writeByte(1);
        out.writeLong(7);
        out.writeLong(10_000);
        Wire.writeString(out, "worker-1");
        byte[] old = bytes.toByteArray();

        LeaseGrant read = (LeaseGrant) CODEC.decode(old);

        assertThat(read).isEqualTo(new LeaseGrant(7, 10_000, "worker-1", ""));
        assertThat(CODEC.encode(read)).as("written the old way, byte for byte").isEqualTo(old);
        assertThat(CODEC.encode(new LeaseGrant(7, 10_000, "worker-1", "ops"))[0] & 0xFF).isEqualTo(36);
    }

    @Test
    void everyCommandRoundTripsWithItsTag() throws IOException {
        for (int i = 0; i < EVERY_COMMAND.size(); i++) {
            Command command = EVERY_COMMAND.get(i);
            byte[] bytes = CODEC.encode(command);
            assertThat(bytes[0] & 0xFF).as("tag of %s", command.getClass().getSimpleName()).isEqualTo(TAGS.get(i));
            assertThat(render(CODEC.decode(bytes))).isEqualTo(render(command));
        }
    }

    /**
     * Logs written before acquire request ids: tag 5 (acquire) and 6 (cancel) read with request id
     * 0, and a command without one is still written so, for members of the previous release.
     */
    @Test
    void theOlderLockEncodingsStillReadAndCarryCommandsWithoutARequestId() throws IOException {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.DataOutputStream out = new java.io.DataOutputStream(bytes);
        out.writeByte(5);
        Wire.writeString(out, "jobs/a");
        out.writeLong(7);
        Wire.writeBytes(out, new byte[] {1});
        out.writeBoolean(true);
        byte[] acquire = bytes.toByteArray();
        bytes.reset();
        out.writeByte(6);
        Wire.writeString(out, "jobs/a");
        out.writeLong(7);
        byte[] cancel = bytes.toByteArray();

        LockAcquire oldAcquire = (LockAcquire) CODEC.decode(acquire);
        LockCancel oldCancel = (LockCancel) CODEC.decode(cancel);

        assertThat(render(oldAcquire)).isEqualTo(render(new LockAcquire("jobs/a", 7, new byte[] {1}, true, 0)));
        assertThat(oldCancel).isEqualTo(new LockCancel("jobs/a", 7, 0));
        assertThat(CODEC.encode(oldAcquire)).as("written the old way, byte for byte").isEqualTo(acquire);
        assertThat(CODEC.encode(oldCancel)).isEqualTo(cancel);
    }

    /** A write-mode acquire is written as before read mode came (tag 10), so that members of the previous release read it. */
    @Test
    void aWriteModeAcquireKeepsTheEncodingFromBeforeReadMode() throws IOException {
        LockAcquire write = new LockAcquire("jobs/a", 7, new byte[] {1}, true, 42);
        byte[] bytes = CODEC.encode(write);

        assertThat(bytes[0] & 0xFF).isEqualTo(10);
        assertThat(render(CODEC.decode(bytes))).isEqualTo(render(write));
        assertThat(((LockAcquire) CODEC.decode(bytes)).shared()).isFalse();
        assertThat(CODEC.encode(new LockAcquire("jobs/a", 7, new byte[] {1}, true, 42, true))[0] & 0xFF).isEqualTo(15);
    }

    /** A transaction's operations are written as on their own; one that nests a transaction is neither written nor read. */
    @Test
    void aTransactionCarriesItsOperationsAndNoTransaction() throws IOException {
        Txn nested = new Txn(List.of(), List.of(new Txn(List.of(), List.of(), List.of(), 0)), List.of(), 1);
        assertThatThrownBy(() -> CODEC.encode(nested)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cannot contain a transaction");

        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        java.io.DataOutputStream out = new java.io.DataOutputStream(bytes);
        out.writeByte(Transactions.TAG);
        out.writeInt(0);
        out.writeInt(1);
        CODEC.write(new Txn(List.of(), List.of(), List.of(), 0), out);
        out.writeInt(0);
        out.writeLong(1);
        assertThatThrownBy(() -> CODEC.decode(bytes.toByteArray())).isInstanceOf(CommandFormatException.class)
                .hasMessageContaining("contains a transaction");
        byte[] oversized = {(byte) Transactions.TAG, 0x7f, 0, 0, 0};
        assertThatThrownBy(() -> CODEC.decode(oversized)).isInstanceOf(CommandFormatException.class).hasMessageContaining("declares");
    }

    @Test
    void aNullMetadataOrClientIdIsWrittenEmpty() throws IOException {
        LockAcquire decoded = (LockAcquire) CODEC.decode(CODEC.encode(new LockAcquire("k", 1, null, false)));
        assertThat(decoded.metadata()).isEmpty();
        assertThat(((LeaseGrant) CODEC.decode(CODEC.encode(new LeaseGrant(1, 1000, null)))).clientId()).isEmpty();
    }

    @Test
    void anUnknownTagATruncatedCommandAndTrailingBytesAreRefused() {
        assertThatThrownBy(() -> CODEC.decode(new byte[] {(byte) 200})).isInstanceOf(CommandFormatException.class)
                .hasMessageContaining("unknown command type 200");
        byte[] acquire = CODEC.encode(EVERY_COMMAND.get(6));
        assertThatThrownBy(() -> CODEC.decode(Arrays.copyOf(acquire, acquire.length - 1))).isInstanceOf(CommandFormatException.class)
                .hasMessageContaining("truncated");
        assertThatThrownBy(() -> CODEC.decode(Arrays.copyOf(acquire, acquire.length + 1))).isInstanceOf(CommandFormatException.class)
                .hasMessageContaining("after the command");
        assertThatThrownBy(() -> CODEC.decode(new byte[] {2, 0x7f, 0, 0, 0})).isInstanceOf(CommandFormatException.class)
                .hasMessageContaining("declares");
    }

    @Test
    void twoTypesCannotShareATagOrAName() {
        record Other(long x) implements Command {}
        CommandType<Other> clash = new CommandType<>(5, Other.class, (c, out) -> out.writeLong(c.x()), in -> new Other(in.readLong()));
        assertThatThrownBy(() -> new CommandCodec(List.of(Kernel.COMMAND_TYPES.get(0), clash, new CommandType<>(5,
                LockCancel.class, (c, out) -> { }, in -> null))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tag 5");
        record LeaseGrant(long x) implements Command {}
        assertThatThrownBy(() -> new CommandCodec(List.of(Kernel.COMMAND_TYPES.get(0),
                new CommandType<>(77, LeaseGrant.class, (c, out) -> { }, in -> null))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("two commands are named LeaseGrant");
    }

    @Test
    void everyCommandTypeOfEveryPrimitiveIsCovered() {
        assertThat(EVERY_COMMAND).allSatisfy(c -> assertThat(CODEC.knows(c)).isTrue());
        long known = EVERY_COMMAND.stream().map(Object::getClass).distinct().count();
        assertThat(known).as("this test names one command of each type").isEqualTo(EVERY_COMMAND.size());
        assertThat(countTypes()).isEqualTo(EVERY_COMMAND.size() + OLDER_TAGS.size());
    }

    private static int countTypes() {
        int n = 0;
        for (int tag = 1; tag < 256; tag++) {
            try {
                CODEC.decode(new byte[] {(byte) tag});
                n++;
            } catch (CommandFormatException e) {
                if (!e.getMessage().contains("unknown command type")) {
                    n++;
                }
            } catch (IOException e) {
                n++;
            }
        }
        return n;
    }

    private static String render(Object value) {
        if (value instanceof byte[] b) {
            return Arrays.toString(b);
        }
        if (value instanceof long[] l) {
            return Arrays.toString(l);
        }
        if (value instanceof List<?> list) {
            return list.stream().map(CommandCodecTest::render).toList().toString();
        }
        if (value instanceof Record r) {
            StringBuilder out = new StringBuilder(r.getClass().getName()).append('(');
            for (RecordComponent c : r.getClass().getRecordComponents()) {
                try {
                    out.append(c.getName()).append('=').append(render(c.getAccessor().invoke(r))).append(' ');
                } catch (ReflectiveOperationException e) {
                    throw new AssertionError(e);
                }
            }
            return out.append(')').toString();
        }
        return String.valueOf(value);
    }
}
