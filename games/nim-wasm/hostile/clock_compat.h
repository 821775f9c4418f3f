/* The clock test's world (hostile/wit/clock.wit) is named clock-game, so wit-bindgen
 * prefixes its shared types with clock_game_ rather than spellbridge_game_: game.c's
 * names mapped to them (forced in with -include before game.c). */
#define spellbridge_game_string_t clock_game_string_t
#define spellbridge_game_string_dup clock_game_string_dup
#define spellbridge_game_string_dup_n clock_game_string_dup_n
#define spellbridge_game_list_string_t clock_game_list_string_t
#define spellbridge_game_list_list_string_t clock_game_list_list_string_t
#define spellbridge_game_tuple2_string_string_t clock_game_tuple2_string_string_t
#define spellbridge_game_list_tuple2_string_string_t clock_game_list_tuple2_string_string_t
#define spellbridge_game_list_u8_t clock_game_list_u8_t
