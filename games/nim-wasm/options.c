/* The game's options: its `[game.options]` table, which the host hands `open` as TOML text
 * (one `key = value` line each). Nim knows one, `piles = [3, 5, 7]`: three piles of 1 to
 * NIM_PILE_MOST stones. Anything else refuses the open, saying what to write. */
#include <string.h>

#include "rules.h"

static int space(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

/* The refusal `id`, its argument the line as written (cut to a name's length). */
static int refuse(struct nim_said *refusal, const char *id, const char *name, const char *line, size_t len) {
    memset(refusal, 0, sizeof *refusal);
    refusal->id = id;
    refusal->audience_player = -1;
    if (len > NIM_NAME_MAX) len = NIM_NAME_MAX;
    refusal->nargs = 1;
    refusal->names[0] = name;
    memcpy(refusal->values[0], line, len);
    refusal->values[0][len] = 0;
    return -1;
}

/* Reads `[n, n, n]` (TOML's spacing) from `at` to `end` into `piles`: 0, or -1. */
static int read_piles(const char *at, const char *end, uint8_t piles[3]) {
    while (at < end && space(*at)) at++;
    if (at == end || *at++ != '[') return -1;
    for (int i = 0; i < 3; i++) {
        while (at < end && space(*at)) at++;
        unsigned n = 0;
        int digits = 0;
        while (at < end && *at >= '0' && *at <= '9' && digits < 3) n = n * 10 + (unsigned)(*at++ - '0'), digits++;
        if (!digits || n < 1 || n > NIM_PILE_MOST) return -1;
        piles[i] = (uint8_t)n;
        while (at < end && space(*at)) at++;
        if (at == end || *at++ != (i < 2 ? ',' : ']')) return -1;
    }
    while (at < end && space(*at)) at++;
    return at == end ? 0 : -1;
}

int nim_options(const char *text, size_t len, uint8_t start[3], struct nim_said *refusal) {
    memcpy(start, NIM_START, 3);
    const char *end = text + len;
    for (const char *line = text; line < end;) {
        const char *stop = memchr(line, '\n', (size_t)(end - line));
        if (!stop) stop = end;
        const char *at = line;
        while (at < stop && space(*at)) at++;
        if (at < stop) {
            const char *key = at;
            while (at < stop && !space(*at) && *at != '=') at++;
            size_t key_len = (size_t)(at - key);
            while (at < stop && space(*at)) at++;
            if (key_len != 5 || memcmp(key, "piles", 5) != 0 || at == stop || *at != '=')
                return refuse(refusal, "nim-option-unknown", "option", key, key_len);
            if (read_piles(at + 1, stop, start) != 0)
                return refuse(refusal, "nim-option-piles", "given", line, (size_t)(stop - line));
        }
        if (stop == end) break;
        line = stop + 1;
    }
    return 0;
}
