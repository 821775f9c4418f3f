"""A matrix-nio echo bot for the Matrix benchmark (`cargo bench -p spellbridge --bench matrix`).

It answers `!echo x` in a room with `x` (an `m.text` message), accepts every invite, and
does nothing else. It runs from the venv of tests/scripts/install-nio.sh:

    $VENV/bin/python tests/scripts/nio_echo.py HOMESERVER USER_ID PASSWORD_FILE

It is written as matrix-nio's own examples write a bot: event callbacks and
`sync_forever` with a long-poll timeout. `sync_forever` passes each response's
`next_batch` on as the next `since` and sleeps nowhere between syncs (no
`loop_sleep_time`); the timeout (30 s) makes each sync a long poll, so the bot neither
spins nor waits to hear of a message. A first sync with no timeout catches up before the
callbacks are added, so old `!echo` messages in a room's history are not answered.
Every callback runs inside the sync loop (matrix-nio awaits them before the next sync),
as is usual for a nio bot. No end-to-end encryption (installed without the e2e extra).
"""

import asyncio
import sys

from nio import AsyncClient, InviteMemberEvent, LoginResponse, MatrixRoom, RoomMessageText

SYNC_TIMEOUT_MS = 30_000


async def main(homeserver: str, user_id: str, password_file: str) -> None:
    with open(password_file, encoding="utf-8") as f:
        password = f.read().strip()
    client = AsyncClient(homeserver, user_id)
    login = await client.login(password, device_name="nio echo bot")
    if not isinstance(login, LoginResponse):
        print(f"nio_echo: login failed: {login}", file=sys.stderr, flush=True)
        sys.exit(1)

    async def on_invite(room: MatrixRoom, event: InviteMemberEvent) -> None:
        if event.state_key == client.user_id and event.membership == "invite":
            await client.join(room.room_id)

    async def on_message(room: MatrixRoom, event: RoomMessageText) -> None:
        if event.sender == client.user_id or not event.body.startswith("!echo "):
            return
        await client.room_send(
            room.room_id,
            "m.room.message",
            {"msgtype": "m.text", "body": event.body[len("!echo "):]},
        )

    # Catch up (no timeout): what is already in the rooms is history, not commands.
    await client.sync(timeout=0, full_state=True)
    for room_id in list(client.invited_rooms):
        await client.join(room_id)
    client.add_event_callback(on_invite, InviteMemberEvent)
    client.add_event_callback(on_message, RoomMessageText)
    print("nio_echo: syncing", file=sys.stderr, flush=True)
    try:
        await client.sync_forever(timeout=SYNC_TIMEOUT_MS)
    finally:
        await client.close()


if __name__ == "__main__":
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        asyncio.run(main(*sys.argv[1:]))
    except KeyboardInterrupt:
        pass
