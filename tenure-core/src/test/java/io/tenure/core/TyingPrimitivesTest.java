package io.tenure.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.tenure.core.kernel.Kernel;
import io.tenure.core.kernel.Leases;
import io.tenure.core.kernel.Names;
import io.tenure.core.kernel.Primitive;
import java.lang.reflect.Method;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The limits on every acquire count what leases hold and wait for over the primitives that say
 * they tie leases ({@link Primitive#tiesLeases}) only: each primitive of the state must say so
 * exactly when it reports names held or waited for, or a limit would undercount.
 */
class TyingPrimitivesTest {
    @Test
    void aPrimitiveTiesLeasesExactlyWhenItReportsHeldOrWaitedNames() throws Exception {
        Kernel kernel = stateKernel();
        int tying = 0;
        for (Primitive p : kernel.primitives()) {
            boolean reports = overrides(p.getClass(), "heldBy") || overrides(p.getClass(), "waitedBy");
            assertThat(p.tiesLeases()).as(p.getClass().getSimpleName() + ".tiesLeases()").isEqualTo(reports);
            tying += reports ? 1 : 0;
        }
        assertThat(tying).as("locks, semaphores, elections, barriers, double barriers, latches, lists, scopes").isEqualTo(8);
    }

    /**
     * The per-client and per-user limits read the lease table's running counts, and visit a
     * client's leases only for the tying primitives whose ties it does not count: every primitive
     * built on {@link io.tenure.core.kernel.Ties} must hand its ties to the state's lease table,
     * or each acquire goes back to visiting all of a client's leases. Lock scopes alone count
     * their own.
     */
    @Test
    void everyPrimitiveBuiltOnTiesIsCountedByTheLeaseTable() throws Exception {
        Kernel kernel = stateKernel();
        int counted = 0;
        for (Primitive p : kernel.primitives()) {
            if (p.ties() != null) {
                assertThat(p.ties().countedBy(kernel.leases())).as(p.getClass().getSimpleName() + "'s ties counted by the lease table").isTrue();
                counted++;
            }
        }
        assertThat(counted).as("locks, semaphores, elections, barriers, double barriers, latches, lists").isEqualTo(7);
    }

    private static Kernel stateKernel() throws NoSuchMethodException {
        Method made = TenureState.class.getDeclaredMethod("primitives", Leases.class, Names.class);
        made.setAccessible(true);
        return new Kernel(16, (leases, names) -> {
            try {
                @SuppressWarnings("unchecked")
                List<Primitive> primitives = (List<Primitive>) made.invoke(null, leases, names);
                return primitives;
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        });
    }

    private static boolean overrides(Class<?> type, String method) throws NoSuchMethodException {
        return type.getMethod(method, long.class).getDeclaringClass() != Primitive.class;
    }
}
