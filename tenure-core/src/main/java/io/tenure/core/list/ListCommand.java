package io.tenure.core.list;

import io.tenure.core.kernel.Command;

/** The commands of lists; {@link ListTable} applies them. */
public sealed interface ListCommand extends Command permits ListPush, ListPop, ListCancel, ListReturn, ListAbandon, ListWithdraw {

    String key();
}
