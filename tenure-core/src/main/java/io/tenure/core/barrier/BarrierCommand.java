package io.tenure.core.barrier;

import io.tenure.core.kernel.Command;

/** The commands of barriers; {@link BarrierTable} applies them. */
public sealed interface BarrierCommand extends Command permits BarrierAwait, BarrierCancel {
}
