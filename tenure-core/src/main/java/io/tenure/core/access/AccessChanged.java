package io.tenure.core.access;

import io.tenure.core.kernel.Result;

/** What an access command changed, in words ("user 'ops' added"): the state itself is read after it. */
public record AccessChanged(String what) implements Result {}
