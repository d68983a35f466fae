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
        Method made = TenureState.class.getDeclaredMethod("primitives", Leases.class, Names.class);
        made.setAccessible(true);
        Kernel kernel = new Kernel(16, (leases, names) -> {
            try {
                @SuppressWarnings("unchecked")
                List<Primitive> primitives = (List<Primitive>) made.invoke(null, leases, names);
                return primitives;
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        });
        int tying = 0;
        for (Primitive p : kernel.primitives()) {
            boolean reports = overrides(p.getClass(), "heldBy") || overrides(p.getClass(), "waitedBy");
            assertThat(p.tiesLeases()).as(p.getClass().getSimpleName() + ".tiesLeases()").isEqualTo(reports);
            tying += reports ? 1 : 0;
        }
        assertThat(tying).as("locks, semaphores, elections, barriers, double barriers, latches, lists, scopes").isEqualTo(8);
    }

    private static boolean overrides(Class<?> type, String method) throws NoSuchMethodException {
        return type.getMethod(method, long.class).getDeclaringClass() != Primitive.class;
    }
}
