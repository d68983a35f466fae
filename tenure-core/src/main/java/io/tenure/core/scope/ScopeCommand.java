package io.tenure.core.scope;

import io.tenure.core.kernel.Command;

/** The commands of lock scopes; {@link ScopeTable} applies them. */
public sealed interface ScopeCommand extends Command permits ScopeAcquire, ScopeRelease, ScopeCancel {
}
