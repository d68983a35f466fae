package io.tenure.core.barrier;

import io.tenure.core.kernel.Command;

/** The commands of double barriers; {@link DoubleBarrierTable} applies them. */
public sealed interface DoubleBarrierCommand extends Command permits DoubleBarrierEnter, DoubleBarrierLeave, DoubleBarrierWithdraw {
}
