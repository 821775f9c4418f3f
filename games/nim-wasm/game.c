/* Nim as a spellbridge game component: the world's exports (wit/game.wit) over rules.c.
 * Each call runs in a fresh instance, so nothing is kept between calls: the state comes
 * in as bytes and goes out as bytes.
 *
 * Built with -DHOSTILE_<KIND>, `take` misbehaves instead (the host's tests of
 * containment): LOOP never returns, MEMORY grows memory without end, HUGE answers ten
 * thousand news, TRAP traps, BAD_STATE returns a state it cannot read back, SLOW counts
 * to 2^30 first and then plays (past any deadline of wall-clock time, within fuel), and
 * CLOCK (built for hostile/wit/clock.wit) tells the wall clock's seconds in its news.
 * WASI uses wasi-libc as a language runtime would (through the preview-1 adapter): it
 * opens files and a folder, reads the environment, writes to stdout and stderr, sleeps an
 * hour, reads both clocks and draws random bytes, and tells what it got in its news (the
 * adapter has no sockets: NET tries them).
 * NET (built for hostile/net-wit/net.wit) makes a TCP socket and looks up a name with
 * WASI 0.2's sockets, and tells the error codes it got.
 * Built with -DECHO_SEED, the opening's first news also names the seed `open` was given
 * (the host's test that a table's committed dice reach `open`).
 * Built with -DTAKE_IS_PICK, `take` is called `pick` (the host's test that a table reads
 * its commands by its own build's grammar).
 * Built with -DSLOW_TIMER, a table of two players not yet over has a timer due at once,
 * which counts to 2^30 (as SLOW does) and then stops the game as `timer` (the host's test
 * that a timer cut off by the deadline replays the same). */
#include <stdlib.h>
#include <string.h>
#if defined(HOSTILE_WASI) || defined(HOSTILE_NET)
#include <stdio.h>
#endif
#ifdef HOSTILE_WASI
#include <dirent.h>
#include <time.h>
#include <unistd.h>
extern char **environ;
#endif

#include "rules.h"
#include "world.h"
#include "texts.h"

typedef spellbridge_game_string_t str_t;

static str_t s(const char *text) {
    str_t out;
    spellbridge_game_string_dup(&out, text);
    return out;
}

static str_t sn(const char *text, size_t len) {
    str_t out;
    spellbridge_game_string_dup_n(&out, text, len);
    return out;
}

static spellbridge_game_list_string_t words(int n, const char **list) {
    spellbridge_game_list_string_t out = {malloc(sizeof(str_t) * (size_t)n), (size_t)n};
    for (int i = 0; i < n; i++) out.ptr[i] = s(list[i]);
    return out;
}

static void command(spellbridge_game_types_command_t *c, const char *name, int naliases, const char **aliases,
                    const char *summary, const char *help, const char *example) {
    memset(c, 0, sizeof *c);
    c->name = s(name);
    c->aliases = words(naliases, aliases);
    c->who = SPELLBRIDGE_GAME_TYPES_WHO_ANYONE;
    c->summary = s(summary);
    c->needs = s("nothing after it");
    c->example = s(example);
    c->help = s(help);
}

#ifdef TAKE_IS_PICK
#define TAKE "pick"
#else
#define TAKE "take"
#endif

void exports_spellbridge_game_game_describe(exports_spellbridge_game_game_info_t *ret) {
    static const char *join[] = {"加入"}, *take[] = {"取", "拿"}, *status[] = {"状态"},
                      *concede[] = {"resign", "认输"}, *stop[] = {"停止", "中止"};
    static const char *pa[] = {"a", "甲"}, *pb[] = {"b", "乙"}, *pc[] = {"c", "丙"};
    ret->name = s("nim-wasm");
    ret->summary = s("Nim as a WebAssembly component: two players take turns taking 1 to 3 stones from one of "
                     "three piles; whoever takes the last stone wins");
    ret->kind.tag = SPELLBRIDGE_GAME_TYPES_TABLE_KIND_CHALLENGE;
    ret->kind.val.challenge = 2;
    ret->commands.len = 5;
    ret->commands.ptr = calloc(5, sizeof(spellbridge_game_types_command_t));
    spellbridge_game_types_command_t *c = ret->commands.ptr;
    command(&c[0], "join", 1, join, "Takes the second seat; the opener moves first (RULES N-1).", "nim-help-join",
            "join");
    command(&c[1], TAKE, 2, take, "On your turn: takes 1 to 3 stones from one pile, a, b or c (RULES N-3, N-4).",
            "nim-help-take", TAKE " 2 b");
    c[1].needs = s("an amount and a pile");
    c[1].args.len = 2;
    c[1].args.ptr = calloc(2, sizeof(spellbridge_game_types_arg_t));
    c[1].args.ptr[0].kind.tag = SPELLBRIDGE_GAME_TYPES_ARG_KIND_NUMBER;
    c[1].args.ptr[0].shown = s("<amount>");
    c[1].args.ptr[1].kind.tag = SPELLBRIDGE_GAME_TYPES_ARG_KIND_CHOICE;
    c[1].args.ptr[1].shown = s("<a|b|c>");
    spellbridge_game_list_list_string_t piles = {malloc(3 * sizeof(spellbridge_game_list_string_t)), 3};
    piles.ptr[0] = words(2, pa);
    piles.ptr[1] = words(2, pb);
    piles.ptr[2] = words(2, pc);
    c[1].args.ptr[1].kind.val.choice = piles;
    command(&c[2], "status", 1, status, "Shows the piles and whose turn it is.", "nim-help-status", "status");
    command(&c[3], "concede", 2, concede, "Gives up the game: your opponent wins.", "nim-help-concede", "concede");
    command(&c[4], "stop", 2, stop, "Room operators, game masters and bot admins: ends the game with no winner.",
            "nim-help-stop", "stop");
    c[4].who = SPELLBRIDGE_GAME_TYPES_WHO_GAME_MASTER_OR_OPERATOR;
}

void exports_spellbridge_game_game_texts(exports_spellbridge_game_game_language_t language, str_t *ret) {
    *ret = s(language == SPELLBRIDGE_GAME_TYPES_LANGUAGE_ZH_CN ? TEXTS_ZH : TEXTS_EN);
}

static spellbridge_game_list_tuple2_string_string_t args_of(const struct nim_said *said) {
    spellbridge_game_list_tuple2_string_string_t out = {
        malloc(sizeof(spellbridge_game_tuple2_string_string_t) * (size_t)(said->nargs ? said->nargs : 1)),
        (size_t)said->nargs};
    for (int i = 0; i < said->nargs; i++) {
        out.ptr[i].f0 = s(said->names[i]);
        out.ptr[i].f1 = s(said->values[i]);
    }
    return out;
}

static void refusal_of(const struct nim_said *said, exports_spellbridge_game_game_refusal_t *err) {
    err->id = s(said->id);
    err->args = args_of(said);
}

static void outcome_of(const struct nim *nim, const struct nim_news *news, exports_spellbridge_game_game_outcome_t *ret) {
    ret->state.ptr = malloc(16 + 2 * (NIM_NAME_MAX + 1));
    ret->state.len = nim_write(nim, ret->state.ptr, 16 + 2 * (NIM_NAME_MAX + 1));
    ret->news.len = (size_t)news->count;
    ret->news.ptr = calloc((size_t)(news->count ? news->count : 1), sizeof(spellbridge_game_types_news_t));
    for (int i = 0; i < news->count; i++) {
        ret->news.ptr[i].to.tag = SPELLBRIDGE_GAME_TYPES_AUDIENCE_TABLE;
        ret->news.ptr[i].id = s(news->said[i].id);
        ret->news.ptr[i].args = args_of(&news->said[i]);
    }
}

bool exports_spellbridge_game_game_open(spellbridge_game_list_string_t *players, str_t *options, uint64_t seed,
                                        int64_t now, exports_spellbridge_game_game_outcome_t *ret,
                                        exports_spellbridge_game_game_refusal_t *err) {
    (void)seed, (void)now;
    struct nim nim;
    struct nim_news news;
    struct nim_said refusal;
    uint8_t start[3];
    if (nim_options((const char *)options->ptr, options->len, start, &refusal)) {
        refusal_of(&refusal, err);
        return false;
    }
    const char *second = players->len > 1 ? (const char *)players->ptr[1].ptr : 0;
    size_t second_len = players->len > 1 ? players->ptr[1].len : 0;
    if (players->len == 0 ||
        nim_open(&nim, start, (const char *)players->ptr[0].ptr, players->ptr[0].len, second, second_len, &news,
                 &refusal)) {
        if (players->len == 0) refusal.id = "nim-no-opponent", refusal.nargs = 0;
        refusal_of(&refusal, err);
        return false;
    }
#ifdef ECHO_SEED
    /* The host's test of the seed: the opening tells the seed `open` was given. */
    struct nim_said *opened = &news.said[0];
    if (opened->nargs < 6) {
        opened->names[opened->nargs] = "seed";
        opened->values[opened->nargs][nim_digits(seed, opened->values[opened->nargs])] = 0;
        opened->nargs++;
    }
#endif
    outcome_of(&nim, &news, ret);
    return true;
}

static int named(const str_t *name, const char *word) {
    return name->len == strlen(word) && memcmp(name->ptr, word, name->len) == 0;
}

#ifdef HOSTILE_LOOP
volatile int forever = 1;
#endif

#ifdef HOSTILE_WASI
/* What the empty WASI gave, as `file=… dir=… env=… out=… slept=… wall=… mono=… random=…`. */
static size_t wasi_probe(char *said, size_t size) {
    FILE *file = fopen("/etc/passwd", "r");
    FILE *here = fopen("secret.txt", "r");
    DIR *root = opendir("/");
    int env = environ && environ[0] ? 1 : 0;
    const char *home = getenv("HOME");
    static char lots[1 << 16];
    memset(lots, 'x', sizeof lots);
    int out = 1;
    for (int i = 0; i < 64; i++) out &= fwrite(lots, 1, sizeof lots, stdout) == sizeof lots;
    out &= fflush(stdout) == 0 && fputs("to stderr\n", stderr) >= 0;
    struct timespec hour = {3600, 0};
    int slept = nanosleep(&hour, NULL) == 0;
    struct timespec wall, mono;
    clock_gettime(CLOCK_REALTIME, &wall);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    unsigned char random[8] = {0};
    getentropy(random, sizeof random);
    return (size_t)snprintf(said, size,
                            "file=%s dir=%s env=%s out=%s slept=%s wall=%lld mono=%lld "
                            "random=%02x%02x%02x%02x%02x%02x%02x%02x",
                            file || here ? "yes" : "no", root ? "yes" : "no", env || home ? "yes" : "no",
                            out ? "ok" : "failed", slept ? "yes" : "no",
                            (long long)wall.tv_sec, (long long)mono.tv_sec * 1000000000LL + mono.tv_nsec,
                            random[0], random[1], random[2], random[3], random[4], random[5], random[6],
                            random[7]);
}
#endif

bool exports_spellbridge_game_game_apply(spellbridge_game_list_u8_t *state, exports_spellbridge_game_game_move_t *move,
                                         uint64_t seed, exports_spellbridge_game_game_outcome_t *ret,
                                         exports_spellbridge_game_game_refusal_t *err) {
    (void)seed;
    struct nim nim;
    struct nim_news news;
    struct nim_said refusal;
    const char *why = nim_read(state->ptr, state->len, &nim);
    if (why) {
        memset(&refusal, 0, sizeof refusal);
        refusal.id = "nim-over";
        refusal_of(&refusal, err);
        return false;
    }
    enum nim_command command;
    uint32_t amount = 0, pile = 0;
    if (named(&move->command, "join")) command = NIM_JOIN;
    else if (named(&move->command, TAKE)) {
        command = NIM_TAKE;
#if defined(HOSTILE_LOOP)
        while (forever) {
        }
#elif defined(HOSTILE_MEMORY)
        for (;;) {
            volatile char *p = malloc(1 << 20);
            if (!p) __builtin_trap();
            p[0] = 1;
        }
#elif defined(HOSTILE_TRAP)
        __builtin_trap();
#elif defined(HOSTILE_SLOW)
        for (volatile uint32_t spin = 0; spin < (1u << 30); spin++) {
        }
#endif
        if (move->args.len == 2 && move->args.ptr[0].tag == SPELLBRIDGE_GAME_TYPES_VALUE_NUMBER &&
            move->args.ptr[1].tag == SPELLBRIDGE_GAME_TYPES_VALUE_CHOICE) {
            amount = move->args.ptr[0].val.number;
            pile = move->args.ptr[1].val.choice;
        }
    } else if (named(&move->command, "status")) command = NIM_STATUS;
    else if (named(&move->command, "concede")) command = NIM_CONCEDE;
    else command = NIM_STOP;
    int gm = move->role != SPELLBRIDGE_GAME_TYPES_ROLE_PLAYER;
    if (nim_apply(&nim, (const char *)move->actor.ptr, move->actor.len, gm, command, amount, pile, &news, &refusal)) {
        refusal_of(&refusal, err);
        return false;
    }
    outcome_of(&nim, &news, ret);
#if defined(HOSTILE_HUGE)
    if (command == NIM_TAKE) {
        ret->news.len = 10000;
        ret->news.ptr = calloc(10000, sizeof(spellbridge_game_types_news_t));
        for (size_t i = 0; i < 10000; i++) ret->news.ptr[i].id = s("nim-took");
    }
#elif defined(HOSTILE_BAD_STATE)
    if (command == NIM_TAKE) ret->state.len = 3;
#elif defined(HOSTILE_CLOCK)
    if (command == NIM_TAKE) {
        wasi_clocks_wall_clock_datetime_t now;
        wasi_clocks_wall_clock_now(&now);
        char seconds[24];
        ret->news.ptr[0].args.ptr[1].f1 = sn(seconds, nim_digits(now.seconds, seconds)); /* the amount: the clock's seconds */
    }
#elif defined(HOSTILE_NET)
    if (command == NIM_TAKE) {
        static char said[64];
        wasi_sockets_tcp_create_socket_own_tcp_socket_t socket;
        wasi_sockets_tcp_create_socket_error_code_t tcp_error;
        wasi_sockets_ip_name_lookup_error_code_t lookup_error;
        int tcp = wasi_sockets_tcp_create_socket_create_tcp_socket(WASI_SOCKETS_NETWORK_IP_ADDRESS_FAMILY_IPV4,
                                                                   &socket, &tcp_error)
                      ? -1
                      : (int)tcp_error;
        wasi_sockets_instance_network_own_network_t network = wasi_sockets_instance_network_instance_network();
        wasi_sockets_ip_name_lookup_own_resolve_address_stream_t found;
        net_game_string_t name;
        net_game_string_dup(&name, "localhost");
        int lookup = -1;
        if (!wasi_sockets_ip_name_lookup_resolve_addresses(wasi_sockets_network_borrow_network(network), &name, &found,
                                                           &lookup_error))
            lookup = (int)lookup_error;
        /* The answer comes later: wait for it while the stream says would-block. */
        for (int tries = 0; lookup == -1 && tries < 100; tries++) {
            wasi_sockets_ip_name_lookup_option_ip_address_t address;
            wasi_sockets_ip_name_lookup_borrow_resolve_address_stream_t stream =
                wasi_sockets_ip_name_lookup_borrow_resolve_address_stream(found);
            if (wasi_sockets_ip_name_lookup_method_resolve_address_stream_resolve_next_address(stream, &address,
                                                                                              &lookup_error))
                break; /* an address: the lookup worked */
            if (lookup_error != WASI_SOCKETS_NETWORK_ERROR_CODE_WOULD_BLOCK) {
                lookup = (int)lookup_error;
                break;
            }
            wasi_io_poll_own_pollable_t ready = wasi_sockets_ip_name_lookup_method_resolve_address_stream_subscribe(stream);
            wasi_io_poll_method_pollable_block(wasi_io_poll_borrow_pollable(ready));
            wasi_io_poll_pollable_drop_own(ready);
        }
        /* the amount: `tcp=<error code> lookup=<error code>` (WASI's numbers: 1 access-denied, 20
         * permanent-resolver-failure; -1 it worked) */
        ret->news.ptr[0].args.ptr[1].f1 = sn(said, (size_t)snprintf(said, sizeof said, "tcp=%d lookup=%d", tcp, lookup));
    }
#elif defined(HOSTILE_WASI)
    if (command == NIM_TAKE) {
        static char said[256];
        ret->news.ptr[0].args.ptr[1].f1 = sn(said, wasi_probe(said, sizeof said)); /* the amount: what WASI gave */
    }
#endif
    return true;
}

void exports_spellbridge_game_game_fire_timer(spellbridge_game_list_u8_t *state, int64_t at, uint64_t seed,
                                              exports_spellbridge_game_game_outcome_t *ret) {
    (void)at, (void)seed;
#ifdef SLOW_TIMER
    struct nim nim;
    struct nim_news news;
    struct nim_said refusal;
    if (!nim_read(state->ptr, state->len, &nim)) {
        for (volatile uint32_t spin = 0; spin < (1u << 30); spin++) {
        }
        if (!nim_apply(&nim, "timer", 5, 1, NIM_STOP, 0, 0, &news, &refusal)) {
            outcome_of(&nim, &news, ret);
            return;
        }
    }
#endif
    ret->state.ptr = malloc(state->len ? state->len : 1);
    memcpy(ret->state.ptr, state->ptr, state->len);
    ret->state.len = state->len;
    ret->news.ptr = 0;
    ret->news.len = 0;
}

bool exports_spellbridge_game_game_check_state(spellbridge_game_list_u8_t *state,
                                               exports_spellbridge_game_game_status_t *ret, str_t *err) {
    struct nim nim;
    const char *why = nim_read(state->ptr, state->len, &nim);
    if (why) {
        *err = s(why);
        return false;
    }
    ret->players.len = nim.count;
    ret->players.ptr = malloc(sizeof(str_t) * 2);
    for (int i = 0; i < nim.count; i++) ret->players.ptr[i] = sn(nim.players[i].name, nim.players[i].len);
    ret->game_masters.len = 0;
    ret->game_masters.ptr = 0;
    ret->finished = nim.finished;
    ret->next_timer.is_some = false;
#ifdef SLOW_TIMER
    ret->next_timer.is_some = nim.count == 2 && !nim.finished;
    ret->next_timer.val = 1;
#endif
    return true;
}

void exports_spellbridge_game_game_public_view(spellbridge_game_list_u8_t *state, str_t *ret) {
    struct nim nim;
    if (nim_read(state->ptr, state->len, &nim)) {
        *ret = s("null");
        return;
    }
    /* Names go out as JSON strings: only the names' bytes that need no escaping. */
    char text[128 + 4 * (NIM_NAME_MAX + 1)];
    size_t at = 0;
    for (int i = 0; i < 3; i++) {
        const char *before = i ? "," : "{\"piles\":[";
        memcpy(text + at, before, strlen(before));
        at += strlen(before);
        at += nim_digits(nim.piles[i], text + at);
    }
    const char *middle = nim.finished ? "],\"finished\":true,\"players\":[" : "],\"finished\":false,\"players\":[";
    memcpy(text + at, middle, strlen(middle));
    at += strlen(middle);
    for (int i = 0; i < nim.count; i++) {
        text[at++] = i ? ',' : '"';
        if (i) text[at++] = '"';
        for (int j = 0; j < nim.players[i].len; j++) {
            char c = nim.players[i].name[j];
            if (c == '"' || c == '\\' || (unsigned char)c < 0x20) c = '_';
            text[at++] = c;
        }
        text[at++] = '"';
    }
    memcpy(text + at, "]}", 2);
    at += 2;
    *ret = sn(text, at);
}

/* Nothing in Nim is hidden: a player's view is the piles and what they may do now, worded
 * by a message of the texts (`said`), which the host shows them privately (`!view`). */
void exports_spellbridge_game_game_private_view(spellbridge_game_list_u8_t *state, str_t *player, str_t *ret) {
    struct nim nim;
    if (nim_read(state->ptr, state->len, &nim)) {
        *ret = s("null");
        return;
    }
    char *view = malloc(1024 + 4 * NIM_NAME_MAX);
    size_t len = nim_private_view(&nim, (const char *)player->ptr, player->len, view);
    ret->ptr = (uint8_t *)view;
    ret->len = len;
}

/* Reads the number after `key` in the JSON text (the piles of a public view), or -1. */
static int number_after(const char *text, size_t len, const char *key, int nth) {
    size_t klen = strlen(key);
    for (size_t i = 0; i + klen <= len; i++) {
        if (memcmp(text + i, key, klen) != 0) continue;
        size_t at = i + klen;
        for (int n = 0; n <= nth; n++) {
            int value = 0, digits = 0;
            while (at < len && text[at] >= '0' && text[at] <= '9' && digits < 6)
                value = value * 10 + (text[at++] - '0'), digits++;
            if (!digits) return -1;
            if (n == nth) return value;
            if (at >= len || text[at++] != ',') return -1;
        }
    }
    return -1;
}

/* An SVG being written: text and numbers appended (no stdio: it would import WASI). */
struct svg {
    char *text;
    size_t at;
};

static void put(struct svg *svg, const char *text) {
    size_t len = strlen(text);
    memcpy(svg->text + svg->at, text, len);
    svg->at += len;
}

static void put_number(struct svg *svg, int n) {
    svg->at += nim_digits((uint64_t)n, svg->text + svg->at);
}

/* The board: each pile a row of stones, in the host's drawing vocabulary (an SVG of
 * rect, circle and text in the palette's colours; see README.md, "The board"). */
bool exports_spellbridge_game_game_board(str_t *public_view, exports_spellbridge_game_game_language_t language,
                                         str_t *ret) {
    const char *view = (const char *)public_view->ptr;
    int piles[3];
    for (int i = 0; i < 3; i++) {
        piles[i] = number_after(view, public_view->len, "\"piles\":[", i);
        if (piles[i] < 0 || piles[i] > 10) return false;
    }
    int zh = language == SPELLBRIDGE_GAME_TYPES_LANGUAGE_ZH_CN;
    static const char *names_en[3] = {"a", "b", "c"};
    static const char *names_zh[3] = {"\xe7\x94\xb2", "\xe4\xb9\x99", "\xe4\xb8\x99"}; /* 甲 乙 丙 */
    struct svg svg = {malloc(8192), 0};
    put(&svg, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"480\" height=\"280\">"
              "<text x=\"24\" y=\"40\" font-size=\"24\" font-weight=\"bold\" fill=\"#222222\">");
    put(&svg, zh ? "\xe5\x8f\x96\xe7\x9f\xb3\xe5\xad\x90" /* 取石子 */ : "Nim");
    put(&svg, "</text>");
    for (int i = 0; i < 3; i++) {
        int y = 90 + i * 70;
        put(&svg, "<rect x=\"16\" y=\"");
        put_number(&svg, y - 28);
        put(&svg, "\" width=\"448\" height=\"56\" rx=\"8\" fill=\"#ffffff\" stroke=\"#9a9184\"/><text x=\"40\" y=\"");
        put_number(&svg, y + 8);
        put(&svg, "\" font-size=\"22\" text-anchor=\"middle\" fill=\"#6b6459\">");
        put(&svg, zh ? names_zh[i] : names_en[i]);
        put(&svg, "</text>");
        for (int k = 0; k < piles[i]; k++) {
            put(&svg, "<circle cx=\"");
            put_number(&svg, 84 + k * 36);
            put(&svg, "\" cy=\"");
            put_number(&svg, y);
            put(&svg, "\" r=\"14\" fill=\"#8b5a2b\" stroke=\"#222222\"/>");
        }
    }
    put(&svg, "</svg>");
    ret->ptr = (uint8_t *)svg.text;
    ret->len = svg.at;
    return true;
}

bool exports_spellbridge_game_game_ended(spellbridge_game_list_u8_t *state, exports_spellbridge_game_game_ending_t *ret) {
    struct nim nim;
    if (nim_read(state->ptr, state->len, &nim) || !nim.finished || nim.winner == 0xff || nim.count != 2) return false;
    ret->places.len = 2;
    ret->places.ptr = malloc(2 * sizeof(spellbridge_game_types_place_t));
    ret->places.ptr[0].player = sn(nim.players[nim.winner].name, nim.players[nim.winner].len);
    ret->places.ptr[0].place = 1;
    ret->places.ptr[1].player = sn(nim.players[1 - nim.winner].name, nim.players[1 - nim.winner].len);
    ret->places.ptr[1].place = 2;
    ret->conceded = nim.reason == NIM_CONCEDED;
    return true;
}
