package io.tenure.core.election;

import io.tenure.core.kernel.Command;

/** The commands of leader elections; {@link ElectionTable} applies them. */
public sealed interface ElectionCommand extends Command permits ElectionCampaign, ElectionProclaim, ElectionResign, ElectionCancel {
}
