/* Nim's rules, as core/src/games/nim/state.rs plays them (RULES N-1 … N-5). */
#include "rules.h"

#include <string.h>

const uint8_t NIM_START[3] = {3, 5, 7};
static const char *PILE_NAMES[3] = {"a", "b", "c"};

size_t nim_digits(uint64_t n, char *out) {
    char reversed[20];
    size_t len = 0;
    do {
        reversed[len++] = (char)('0' + n % 10);
        n /= 10;
    } while (n);
    for (size_t i = 0; i < len; i++) out[i] = reversed[len - 1 - i];
    return len;
}

size_t nim_write(const struct nim *nim, uint8_t *out, size_t room) {
    size_t need = 11;
    for (int i = 0; i < nim->count; i++) need += 1 + nim->players[i].len;
    if (need > room) return 0;
    memcpy(out, "NIM1", 4);
    out[4] = nim->piles[0];
    out[5] = nim->piles[1];
    out[6] = nim->piles[2];
    out[7] = nim->turn;
    out[8] = nim->finished;
    out[9] = nim->winner;
    out[10] = nim->reason;
    size_t at = 11;
    out[at++] = nim->count;
    for (int i = 0; i < nim->count; i++) {
        out[at++] = nim->players[i].len;
        memcpy(out + at, nim->players[i].name, nim->players[i].len);
        at += nim->players[i].len;
    }
    return at;
}

const char *nim_read(const uint8_t *bytes, size_t len, struct nim *nim) {
    memset(nim, 0, sizeof *nim);
    if (len < 12 || memcmp(bytes, "NIM1", 4) != 0) return "not a Nim state (no NIM1 header)";
    for (int i = 0; i < 3; i++) {
        nim->piles[i] = bytes[4 + i];
        if (nim->piles[i] > NIM_PILE_MOST) return "a pile holds more stones than a pile may start with";
    }
    nim->turn = bytes[7];
    nim->finished = bytes[8];
    nim->winner = bytes[9];
    nim->reason = bytes[10];
    nim->count = bytes[11];
    if (nim->count < 1 || nim->count > 2) return "a Nim table seats 1 or 2 players";
    if (nim->turn >= nim->count || nim->finished > 1 || nim->reason > NIM_STOPPED) return "a bad turn or ending";
    if (nim->winner != 0xff && nim->winner >= nim->count) return "the winner is not seated";
    size_t at = 12;
    for (int i = 0; i < nim->count; i++) {
        if (at >= len) return "a player's name is cut short";
        uint8_t n = bytes[at++];
        if (n == 0 || at + n > len) return "a player's name is cut short";
        nim->players[i].len = n;
        memcpy(nim->players[i].name, bytes + at, n);
        at += n;
    }
    if (at != len) return "bytes left over after the state";
    return 0;
}

static void said(struct nim_said *s, const char *id) {
    memset(s, 0, sizeof *s);
    s->id = id;
    s->audience_player = -1;
}

static void arg_text(struct nim_said *s, const char *name, const char *text, size_t len) {
    if (s->nargs >= 6) return;
    if (len > NIM_NAME_MAX) len = NIM_NAME_MAX;
    s->names[s->nargs] = name;
    memcpy(s->values[s->nargs], text, len);
    s->values[s->nargs][len] = 0;
    s->nargs++;
}

static void arg_player(struct nim_said *s, const char *name, const struct nim_player *p) {
    arg_text(s, name, p->name, p->len);
}

static void arg_number(struct nim_said *s, const char *name, unsigned n) {
    char text[24];
    arg_text(s, name, text, nim_digits(n, text));
}

static void arg_piles(struct nim_said *s, const struct nim *nim) {
    char text[64];
    size_t len = 0;
    for (int i = 0; i < 3; i++) {
        static const char *const before[3] = {"a ", " · b ", " · c "};
        memcpy(text + len, before[i], strlen(before[i]));
        len += strlen(before[i]);
        len += nim_digits(nim->piles[i], text + len);
    }
    arg_text(s, "piles", text, len);
}

static int seat_of(const struct nim *nim, const char *actor, size_t len) {
    for (int i = 0; i < nim->count; i++)
        if (nim->players[i].len == len && memcmp(nim->players[i].name, actor, len) == 0) return i;
    return -1;
}

static int set_player(struct nim_player *p, const char *name, size_t len) {
    if (len == 0 || len > NIM_NAME_MAX) return -1;
    p->len = (uint8_t)len;
    memcpy(p->name, name, len);
    return 0;
}

int nim_open(struct nim *nim, const uint8_t start[3], const char *opener, size_t opener_len, const char *second,
             size_t second_len, struct nim_news *news, struct nim_said *refusal) {
    memset(nim, 0, sizeof *nim);
    memcpy(nim->piles, start, 3);
    nim->winner = 0xff;
    news->count = 0;
    if (set_player(&nim->players[0], opener, opener_len) != 0) {
        said(refusal, "nim-no-opponent");
        return -1;
    }
    nim->count = 1;
    struct nim_said *s = &news->said[news->count++];
    said(s, "nim-opened");
    arg_player(s, "player", &nim->players[0]);
    arg_piles(s, nim);
    if (second && (second_len != opener_len || memcmp(second, opener, opener_len) != 0) &&
        set_player(&nim->players[1], second, second_len) == 0) {
        nim->count = 2;
        s = &news->said[news->count++];
        said(s, "nim-joined");
        arg_player(s, "player", &nim->players[1]);
        arg_player(s, "first", &nim->players[0]);
        arg_piles(s, nim);
    }
    return 0;
}

static void finish(struct nim *nim, int winner, uint8_t reason) {
    nim->finished = 1;
    nim->winner = winner < 0 ? 0xff : (uint8_t)winner;
    nim->reason = reason;
}

static int refuse_unseated(const struct nim *nim, struct nim_said *refusal) {
    if (nim->count == 2) {
        said(refusal, "nim-not-seated");
        arg_player(refusal, "first", &nim->players[0]);
        arg_player(refusal, "second", &nim->players[1]);
    } else {
        said(refusal, "nim-not-seated-yet");
    }
    return -1;
}

int nim_apply(struct nim *nim, const char *actor, size_t actor_len, int gm_or_operator, enum nim_command command,
              uint32_t amount, uint32_t pile, struct nim_news *news, struct nim_said *refusal) {
    news->count = 0;
    if (nim->finished) {
        said(refusal, "nim-over");
        return -1;
    }
    int seat = seat_of(nim, actor, actor_len);
    struct nim_said *s;
    switch (command) {
    case NIM_STATUS:
        s = &news->said[news->count++];
        if (nim->count == 2) {
            said(s, "nim-status");
            arg_player(s, "first", &nim->players[0]);
            arg_player(s, "second", &nim->players[1]);
            arg_player(s, "next", &nim->players[nim->turn]);
        } else {
            said(s, "nim-status-waiting");
            arg_player(s, "player", &nim->players[0]);
        }
        arg_piles(s, nim);
        return 0;
    case NIM_JOIN:
        if (seat >= 0) {
            said(refusal, "nim-already-seated");
            return -1;
        }
        if (nim->count == 2) {
            said(refusal, "nim-seats-taken");
            arg_player(refusal, "first", &nim->players[0]);
            arg_player(refusal, "second", &nim->players[1]);
            return -1;
        }
        if (set_player(&nim->players[1], actor, actor_len) != 0) {
            said(refusal, "nim-not-seated-yet");
            return -1;
        }
        nim->count = 2;
        s = &news->said[news->count++];
        said(s, "nim-joined");
        arg_player(s, "player", &nim->players[1]);
        arg_player(s, "first", &nim->players[0]);
        arg_piles(s, nim);
        return 0;
    case NIM_TAKE:
        if (seat < 0) return refuse_unseated(nim, refusal);
        if (nim->count < 2) {
            said(refusal, "nim-no-opponent");
            return -1;
        }
        if (seat != nim->turn) {
            said(refusal, "nim-not-your-turn");
            arg_player(refusal, "player", &nim->players[nim->turn]);
            return -1;
        }
        if (amount < 1 || amount > NIM_MOST) {
            said(refusal, "nim-amount");
            arg_number(refusal, "most", NIM_MOST);
            arg_number(refusal, "amount", amount);
            return -1;
        }
        if (pile > 2) {
            said(refusal, "nim-over");
            return -1;
        }
        if (nim->piles[pile] == 0) {
            said(refusal, "nim-pile-empty");
            arg_text(refusal, "pile", PILE_NAMES[pile], 1);
            arg_piles(refusal, nim);
            return -1;
        }
        if (amount > nim->piles[pile]) {
            said(refusal, "nim-pile-short");
            arg_text(refusal, "pile", PILE_NAMES[pile], 1);
            arg_number(refusal, "left", nim->piles[pile]);
            return -1;
        }
        /* Checked: from here on nothing can fail. */
        nim->piles[pile] -= (uint8_t)amount;
        s = &news->said[news->count++];
        if (nim->piles[0] == 0 && nim->piles[1] == 0 && nim->piles[2] == 0) {
            said(s, "nim-took-last");
            arg_player(s, "player", &nim->players[seat]);
            arg_number(s, "amount", amount);
            arg_text(s, "pile", PILE_NAMES[pile], 1);
            arg_piles(s, nim);
            finish(nim, seat, NIM_LAST_STONE);
            s = &news->said[news->count++];
            said(s, "nim-won");
            arg_player(s, "player", &nim->players[seat]);
            arg_player(s, "loser", &nim->players[1 - seat]);
        } else {
            nim->turn = (uint8_t)(1 - seat);
            said(s, "nim-took");
            arg_player(s, "player", &nim->players[seat]);
            arg_number(s, "amount", amount);
            arg_text(s, "pile", PILE_NAMES[pile], 1);
            arg_piles(s, nim);
            arg_player(s, "next", &nim->players[nim->turn]);
        }
        return 0;
    case NIM_CONCEDE:
        if (seat < 0) return refuse_unseated(nim, refusal);
        s = &news->said[news->count++];
        if (nim->count == 2) {
            finish(nim, 1 - seat, NIM_CONCEDED);
            said(s, "nim-conceded");
            arg_player(s, "player", &nim->players[seat]);
            arg_player(s, "winner", &nim->players[1 - seat]);
        } else {
            finish(nim, -1, NIM_CONCEDED);
            said(s, "nim-closed");
            arg_player(s, "player", &nim->players[seat]);
        }
        return 0;
    case NIM_STOP:
        if (!gm_or_operator) {
            said(refusal, "nim-may-not-stop");
            return -1;
        }
        finish(nim, -1, NIM_STOPPED);
        s = &news->said[news->count++];
        said(s, "nim-stopped");
        arg_text(s, "player", actor, actor_len);
        return 0;
    }
    said(refusal, "nim-over");
    return -1;
}

/* Appends `text` as the body of a JSON string: the bytes that need escaping (a quote, a
 * backslash, a control character) become `_`, as the public view writes names. */
static size_t json_text(char *out, const char *text, size_t len) {
    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        out[i] = (c == '"' || c == '\\' || (unsigned char)c < 0x20) ? '_' : c;
    }
    return len;
}

static size_t put_text(char *out, const char *text) {
    memcpy(out, text, strlen(text));
    return strlen(text);
}

size_t nim_private_view(const struct nim *nim, const char *player, size_t player_len, char *out) {
    struct nim_said view;
    int seat = seat_of(nim, player, player_len);
    if (nim->finished) {
        said(&view, "nim-over");
    } else if (seat < 0) {
        said(&view, "nim-view-not-playing");
        arg_piles(&view, nim);
    } else if (nim->count < 2) {
        said(&view, "nim-view-waiting");
        arg_piles(&view, nim);
    } else if (nim->turn == seat) {
        /* The example names the first pile with stones, and as many as may be taken. */
        int pile = 0;
        while (pile < 2 && nim->piles[pile] == 0) pile++;
        unsigned most = nim->piles[pile] < NIM_MOST ? nim->piles[pile] : NIM_MOST;
        said(&view, "nim-view-your-turn");
        arg_piles(&view, nim);
        arg_number(&view, "most", NIM_MOST);
        arg_number(&view, "amount", most);
        arg_text(&view, "pile", PILE_NAMES[pile], 1);
    } else {
        said(&view, "nim-view-their-turn");
        arg_piles(&view, nim);
        arg_player(&view, "player", &nim->players[nim->turn]);
    }
    size_t at = put_text(out, "{\"piles\":[");
    for (int i = 0; i < 3; i++) {
        if (i) out[at++] = ',';
        at += nim_digits(nim->piles[i], out + at);
    }
    at += put_text(out + at, "],\"said\":{\"id\":\"");
    at += put_text(out + at, view.id);
    at += put_text(out + at, "\",\"args\":{");
    for (int i = 0; i < view.nargs; i++) {
        if (i) out[at++] = ',';
        out[at++] = '"';
        at += put_text(out + at, view.names[i]);
        at += put_text(out + at, "\":\"");
        at += json_text(out + at, view.values[i], strlen(view.values[i]));
        out[at++] = '"';
    }
    at += put_text(out + at, "}}}");
    return at;
}
