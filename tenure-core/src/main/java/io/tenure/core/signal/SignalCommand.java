package io.tenure.core.signal;

import io.tenure.core.kernel.Command;

/** The commands of signals; {@link SignalTable} applies them. */
public sealed interface SignalCommand extends Command permits SignalListen, SignalUnlisten, SignalPublish {
}
