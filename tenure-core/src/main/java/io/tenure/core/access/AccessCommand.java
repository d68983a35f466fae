package io.tenure.core.access;

import io.tenure.core.kernel.Command;

/** The commands of users, roles, tokens and the authentication switch; {@link AccessTable} applies them. */
public sealed interface AccessCommand extends Command permits UserAdd, UserDelete, UserPassword, UserGrantRole, UserRevokeRole,
        RoleAdd, RoleDelete, RoleGrant, RoleRevoke, AuthEnable, AuthDisable, TokenIssue, TokenRevoke {
}
