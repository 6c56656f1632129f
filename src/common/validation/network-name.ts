/**
 * A session-handover group's name (the `session_handover` setting, docs/decisions.md "Server
 * switching"): set by PUT /admin/session-handover, and read by the scoped boards' `group`
 * parameter (decisions.md "Scoped boards: groups and countries"). One rule for both.
 */
export const NETWORK_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;
export const NETWORK_NAME_MESSAGE = 'name must be 1-64 characters of A-Z, a-z, 0-9, _, . and -';
