package io.tenure.core.kv;

import io.tenure.core.kernel.Command;

/** The commands of the key-value store; {@link KvTable} applies them. */
public sealed interface KvCommand extends Command permits KvPut, KvCompareAndSet, KvDelete, KvExpire {
}
