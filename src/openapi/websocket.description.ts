/**
 * The WebSocket protocol (decisions.md §7) in the OpenAPI description: it is not HTTP, so no
 * operation can carry it, but a plugin developer reading /docs needs it.
 */
export const WEBSOCKET_DESCRIPTION = `## WebSocket \`/ws\`

The address is \`wsServer\` from \`POST /server/login\`. The upgrade request carries \`Authorization: Bearer <server access token>\`;
without a live token the upgrade is refused with HTTP **401** and the usual \`{"error", "message"}\` body, before any frame.

Frames are JSON text \`{"event": string, "data": object}\`, at most 16 KiB, and follow the rules of every JSON body: at most
64 levels of nesting, at most 1,000 keys in an object, no NUL character, no lone surrogate, no key \`__proto__\`,
\`constructor\` or \`prototype\`.
A frame that is not JSON, breaks those rules, has no string \`event\`, names an unknown event or has a non-object \`data\` is
answered \`{"event": "error", "data": {"error": "BAD_REQUEST", "message": "…", "errors": []}}\` (\`PAYLOAD_TOO_LARGE\` for a
frame over 16 KiB); the connection stays open. A frame over 256 KiB closes the socket with 1009. A bad field of an event's
\`data\` is named in \`errors\` as in a 400 (\`[{"field": "message", "message": "must be …"}]\`).

| event | direction | data |
|---|---|---|
| \`resume_session\` | plugin → service | \`{uid, accessToken}\`: binds the player to this server session and renews the player token for \`PLAYER_TOKEN_TTL_SECONDS\`; send it after each player sync and every 240 s. A session held by another server moves here only when the two are one network (the session-handover setting); otherwise \`ok: false\` and nothing changes |
| \`resume_session\` | service → plugin | \`{uid, ok: true, expiresIn}\`, or \`{uid, ok: false, error, message}\` (\`uid\` is \`null\` when the frame's uid was not an integer) |
| \`chat\` | plugin → service | \`{uid, message}\`: 1–256 characters; the player needs a live session bound to this server session. Not acknowledged: the sender receives the line like every other server of its network (with handover \`groups\`, the sender's group; otherwise every server). At most CHAT_LINES_PER_SECOND (5) lines a second per server session (all its sockets), CHAT_BURST (20) at once; over it the line is not delivered and the sender gets an \`error\` frame \`RATE_LIMITED\` |
| \`chat\` | service → plugin | \`{uid, username, displayName, message, serverID, serverName, prefix, suffix}\`; \`prefix\`/\`suffix\` are \`null\` or \`{key, title, description, rarity, position}\` |
| \`kick_player\` | service → plugin | \`{uid, message, reason, until}\`: kick the player with \`message\`. The player was banned (\`reason\` is the ban's, \`until\` \`""\` for a permanent ban), or their session moved to another server: \`reason\` \`handover\` (a server of the same network) or \`takeover\` (a login with the player's Net Token or resume token took over a session this server opened ONLINE) |
| \`board_updates\` | plugin → service | \`{enabled}\`: whether this socket wants \`board_update\` frames (off until asked; again after each reconnect); answered with the same event and the setting |
| \`board_update\` | service → plugin | \`{atp, levelIds, top}\`: the first \`top\` places of the ATP board (\`atp\`) and of these charts' boards may have changed; read them again. Only to a socket that asked |
| \`collection_updates\` | plugin → service | \`{enabled}\`: whether this socket wants \`collections_granted\` frames (off until asked; again after each reconnect); answered with the same event and the setting, then what was kept for the session meanwhile |
| \`collections_granted\` | service → plugin | \`{uid, keys, reason, season}\`: the player (online on this server) was granted the collections \`keys\`; \`reason\` \`season\`: a season's close rule (\`season\` its slug). Refresh the player's collections. Only to a socket that asked; kept for the session until one does (or it expires), like \`kick_player\` for a reconnecting socket |
| \`error\` | service → plugin | \`{error, message}\`: a malformed frame, or a \`chat\` that was refused |

Close codes:

| code | meaning | what the plugin does |
|---|---|---|
| 4001 | the token the socket was opened with expires in 30 s | \`GET /server/refresh\`, then reconnect |
| 4002 | the server session ended (a new login for this serverID, or logout) | full \`POST /server/login\` |
| 4003 | a newer socket of the same server session took its place (more than WS_CONNECTIONS_PER_SERVER_SESSION, 3, open on one instance; the newest is kept) | nothing: use the newer socket |
| 1001 | the service is shutting down | reconnect (after a refresh if needed) |
| 1009 | a frame over 256 KiB | reconnect; send smaller frames |

The service pings every 30 s; a socket that missed a pong is terminated. With \`REDIS_URL\`, events reach a game server on
whichever instance it is connected to.`;
