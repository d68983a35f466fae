package io.tenure.core.latch;

import io.tenure.core.kernel.Command;

/** The commands of count-down latches; {@link LatchTable} applies them. */
public sealed interface LatchCommand extends Command permits LatchSetCount, LatchCountDown, LatchAwait, LatchCancel {
}
