package io.tenure.core.semaphore;

import io.tenure.core.kernel.Command;

/** The commands of counting semaphores; {@link SemaphoreTable} applies them. */
public sealed interface SemaphoreCommand extends Command permits SemaphoreAcquire, SemaphoreRelease, SemaphoreCancel {
}
