/* The hostile worlds (hostile/wit/clock.wit's clock-game, hostile/net-wit/net.wit's
 * net-game) have other names than spellbridge-game, so wit-bindgen prefixes their shared
 * types with clock_game_ or net_game_ rather than spellbridge_game_: game.c's names mapped
 * to them (forced in with -include before game.c, WORLD naming the prefix:
 * -DWORLD=clock_game). */
#define WORLD_CAT_(a, b) a##b
#define WORLD_CAT(a, b) WORLD_CAT_(a, b)
#define spellbridge_game_string_t WORLD_CAT(WORLD, _string_t)
#define spellbridge_game_string_dup WORLD_CAT(WORLD, _string_dup)
#define spellbridge_game_string_dup_n WORLD_CAT(WORLD, _string_dup_n)
#define spellbridge_game_list_string_t WORLD_CAT(WORLD, _list_string_t)
#define spellbridge_game_list_list_string_t WORLD_CAT(WORLD, _list_list_string_t)
#define spellbridge_game_tuple2_string_string_t WORLD_CAT(WORLD, _tuple2_string_string_t)
#define spellbridge_game_list_tuple2_string_string_t WORLD_CAT(WORLD, _list_tuple2_string_string_t)
#define spellbridge_game_list_u8_t WORLD_CAT(WORLD, _list_u8_t)
