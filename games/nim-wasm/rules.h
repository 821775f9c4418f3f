/* Nim's rules (core/src/games/nim/RULES.md, ids N-1 … N-5) on a plain C state, with no
 * bindings: game.c turns the world's types into these calls. */
#ifndef NIM_RULES_H
#define NIM_RULES_H

#include <stddef.h>
#include <stdint.h>

#define NIM_NAME_MAX 255
#define NIM_MOST 3
/* The most stones a pile may start with (the option `piles`; the board draws up to 10). */
#define NIM_PILE_MOST 10

/* The piles a table starts with when the options name none (RULES N-2). */
extern const uint8_t NIM_START[3];

enum nim_reason { NIM_NONE = 0, NIM_LAST_STONE = 1, NIM_CONCEDED = 2, NIM_STOPPED = 3 };

struct nim_player {
    uint8_t len;
    char name[NIM_NAME_MAX];
};

struct nim {
    uint8_t piles[3];
    uint8_t turn;
    uint8_t finished;
    uint8_t winner; /* 0xff: none */
    uint8_t reason;
    uint8_t count;
    struct nim_player players[2];
};

/* One piece of news or a refusal: a message id and up to 6 named arguments. */
struct nim_said {
    const char *id;
    int audience_player; /* -1: the table */
    int nargs;
    const char *names[6];
    char values[6][NIM_NAME_MAX + 1];
};

struct nim_news {
    int count;
    struct nim_said said[3];
};

/* The state as bytes: "NIM1", piles, turn, finished, winner, reason, count, then each
 * player's name as a length byte and its bytes. */
size_t nim_write(const struct nim *nim, uint8_t *out, size_t room);
/* 0 when `bytes` are a state; else a reason (a static string). */
const char *nim_read(const uint8_t *bytes, size_t len, struct nim *nim);

/* Opens a table with piles `start` for the opener (and a second player, if given). 0, or
 * a refusal. */
int nim_open(struct nim *nim, const uint8_t start[3], const char *opener, size_t opener_len, const char *second,
             size_t second_len, struct nim_news *news, struct nim_said *refusal);

/* Reads the options (the `[game.options]` table as TOML text) into `start`: 0, or -1 and
 * the refusal saying what to write instead. */
int nim_options(const char *text, size_t len, uint8_t start[3], struct nim_said *refusal);

/* `player`'s private view of the table as JSON text (a message of the texts under `said`)
 * into `out` (room for 1024 + 4 * NIM_NAME_MAX bytes); returns its length. */
size_t nim_private_view(const struct nim *nim, const char *player, size_t player_len, char *out);

enum nim_command { NIM_JOIN, NIM_TAKE, NIM_STATUS, NIM_CONCEDE, NIM_STOP };

/* Applies a command: 0 and the news, or -1 and the refusal (the state unchanged). */
int nim_apply(struct nim *nim, const char *actor, size_t actor_len, int gm_or_operator, enum nim_command command,
              uint32_t amount, uint32_t pile, struct nim_news *news, struct nim_said *refusal);

/* Writes `n` in decimal at `out` (room for 20 digits); returns the length. (No printf:
 * wasi-libc's stdio would import WASI's files.) */
size_t nim_digits(uint64_t n, char *out);

#endif
