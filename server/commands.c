/*
 * commands.c - the command table (commands.h) and its lookups.
 */
#include "commands.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RO (CMD_READONLY | CMD_BATCH)
#define RW (CMD_WRITE | CMD_BATCH)
#define RWF (CMD_WRITE | CMD_BATCH | CMD_FAST)
#define ROF (CMD_READONLY | CMD_BATCH | CMD_FAST)
#define CONN_F (CMD_FAST | CMD_LOADING | CMD_STALE)

/* clang-format off */
static const command table[] = {
    {.name = "ping", .arity = -1, .flags = CMD_FAST | CMD_PUBSUB, .fn = cmd_ping, .group = "connection", .since = "1.0.0", .summary = "Returns the server's liveliness response."},
    {.name = "echo", .arity = 2, .flags = CONN_F, .fn = cmd_echo, .group = "connection", .since = "1.0.0", .summary = "Returns the given string."},
    {.name = "quit", .arity = -1, .flags = CMD_ALLOW_BUSY | CONN_F | CMD_NOAUTH | CMD_NOQUEUE | CMD_PUBSUB | CMD_NOSCRIPT, .fn = cmd_quit, .group = "connection", .since = "1.0.0", .summary = "Closes the connection."},
    {.name = "hello", .arity = -1, .flags = CMD_ALLOW_BUSY | CONN_F | CMD_NOAUTH | CMD_DRAIN | CMD_NOSCRIPT, .fn = cmd_hello, .group = "connection", .since = "6.0.0", .summary = "Handshakes with the server."},
    {.name = "auth", .arity = -2, .flags = CMD_ALLOW_BUSY | CONN_F | CMD_NOAUTH | CMD_NOSCRIPT, .fn = cmd_auth, .group = "connection", .since = "1.0.0", .summary = "Authenticates the connection.", .complexity = "O(N)"},
    {.name = "select", .arity = 2, .flags = CONN_F, .fn = cmd_select, .group = "connection", .since = "1.0.0", .summary = "Changes the selected database."},
    {.name = "client", .arity = -2, .flags = CMD_CONTAINER, .group = "connection", .since = "2.4.0", .summary = "A container for client connection commands.", .complexity = "Depends on subcommand.", .nsubs = 18},
        {.name = "id", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_id, .group = "connection", .since = "5.0.0", .summary = "Returns the unique client ID of the connection."},
        {.name = "getname", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_getname, .group = "connection", .since = "2.6.9", .summary = "Returns the name of the connection."},
        {.name = "setname", .arity = 3, .flags = CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_setname, .group = "connection", .since = "2.6.9", .summary = "Sets the connection name."},
        {.name = "setinfo", .arity = 4, .flags = CONN_F | CMD_SUB, .fn = cmd_client_setinfo, .group = "connection", .since = "7.2.0", .summary = "Sets information specific to the client or connection."},
        {.name = "list", .arity = -2, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_list, .group = "connection", .since = "2.4.0", .summary = "Lists open connections.", .complexity = "O(N)"},
        {.name = "info", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_info, .group = "connection", .since = "6.2.0", .summary = "Returns information about the connection."},
        {.name = "kill", .arity = -3, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_kill, .group = "connection", .since = "2.4.0", .summary = "Terminates open connections.", .complexity = "O(N)"},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_client_help, .group = "connection", .since = "5.0.0", .summary = "Returns helpful text about the different subcommands."},
        {.name = "tracking", .arity = -3, .flags = CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_tracking, .group = "connection", .since = "6.0.0", .summary = "Controls server-assisted client-side caching for the connection.", .complexity = "O(1). Some options may introduce additional complexity."},
        {.name = "caching", .arity = 3, .flags = CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_caching, .group = "connection", .since = "6.0.0", .summary = "Instructs the server whether to track the keys in the next request."},
        {.name = "getredir", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_getredir, .group = "connection", .since = "6.0.0", .summary = "Returns the client ID to which the connection's tracking notifications are redirected."},
        {.name = "reply", .arity = 3, .flags = CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_reply, .group = "connection", .since = "3.2.0", .summary = "Instructs the server whether to reply to commands."},
        {.name = "no-evict", .arity = 3, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_client_no_evict, .group = "connection", .since = "7.0.0", .summary = "Sets the client eviction mode of the connection."},
        {.name = "no-touch", .arity = 3, .flags = CONN_F | CMD_SUB, .fn = cmd_client_no_touch, .group = "connection", .since = "7.2.0", .summary = "Controls whether commands sent by the client affect the LRU/LFU of accessed keys."},
        {.name = "unblock", .arity = -3, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_client_unblock, .group = "connection", .since = "5.0.0", .summary = "Unblocks a client blocked by a blocking command from a different connection.", .complexity = "O(log N) where N is the number of client connections"},
        {.name = "pause", .arity = -3, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_client_pause, .group = "connection", .since = "3.0.0", .summary = "Suspends commands processing."},
        {.name = "unpause", .arity = 2, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_client_unpause, .group = "connection", .since = "6.2.0", .summary = "Resumes processing commands from paused clients.", .complexity = "O(N) Where N is the number of paused clients"},
        {.name = "trackinginfo", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_client_trackinginfo, .group = "connection", .since = "6.2.0", .summary = "Returns information about server-assisted client-side caching for the connection."},
    {.name = "reset", .arity = 1, .flags = CONN_F | CMD_NOAUTH | CMD_DRAIN | CMD_NOQUEUE | CMD_PUBSUB | CMD_NOSCRIPT | CMD_ALLOW_BUSY, .fn = cmd_reset, .group = "connection", .since = "6.2.0", .summary = "Resets the connection."},
    {.name = "multi", .arity = 1, .flags = CMD_ALLOW_BUSY | CMD_FAST | CMD_LOADING | CMD_STALE | CMD_NOSCRIPT | CMD_NOQUEUE, .fn = cmd_multi, .group = "transactions", .since = "1.2.0", .summary = "Starts a transaction."},
    {.name = "exec", .arity = 1, .flags = CMD_LOADING | CMD_STALE | CMD_NOSCRIPT | CMD_NOQUEUE | CMD_SKIP_SLOWLOG, .fn = cmd_exec, .group = "transactions", .since = "1.2.0", .summary = "Executes all commands in a transaction.", .complexity = "Depends on commands in the transaction"},
    {.name = "discard", .arity = 1, .flags = CMD_ALLOW_BUSY | CMD_FAST | CMD_LOADING | CMD_STALE | CMD_NOSCRIPT | CMD_NOQUEUE, .fn = cmd_discard, .group = "transactions", .since = "2.0.0", .summary = "Discards a transaction.", .complexity = "O(N), when N is the number of queued commands"},
    {.name = "watch", .arity = -2, .flags = CMD_FAST | CMD_LOADING | CMD_STALE | CMD_NOSCRIPT | CMD_NOQUEUE | CMD_EXCL | CMD_ALLOW_BUSY, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_watch, .group = "transactions", .since = "2.2.0", .summary = "Monitors changes to keys to determine the execution of a transaction.", .complexity = "O(1) for every key."},
    {.name = "unwatch", .arity = 1, .flags = CMD_ALLOW_BUSY | CMD_FAST | CMD_LOADING | CMD_STALE | CMD_NOSCRIPT, .fn = cmd_unwatch, .group = "transactions", .since = "2.2.0", .summary = "Forgets about watched keys of a transaction.", .complexity = "O(1)"},
    {.name = "subscribe", .arity = -2, .flags = CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .fn = cmd_subscribe, .group = "pubsub", .since = "2.0.0", .summary = "Listens for messages published to channels.", .complexity = "O(N) where N is the number of channels to subscribe to."},
    {.name = "unsubscribe", .arity = -1, .flags = CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .fn = cmd_unsubscribe, .group = "pubsub", .since = "2.0.0", .summary = "Stops listening to messages posted to channels.", .complexity = "O(N) where N is the number of channels to unsubscribe."},
    {.name = "psubscribe", .arity = -2, .flags = CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .fn = cmd_psubscribe, .group = "pubsub", .since = "2.0.0", .summary = "Listens for messages published to channels that match one or more patterns.", .complexity = "O(N) where N is the number of patterns to subscribe to."},
    {.name = "punsubscribe", .arity = -1, .flags = CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .fn = cmd_punsubscribe, .group = "pubsub", .since = "2.0.0", .summary = "Stops listening to messages published to channels that match one or more patterns.", .complexity = "O(N) where N is the number of patterns to unsubscribe."},
    {.name = "publish", .arity = 3, .flags = CMD_FAST | CMD_LOADING | CMD_STALE, .fn = cmd_publish, .group = "pubsub", .since = "2.0.0", .summary = "Posts a message to a channel.", .complexity = "O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client)."},
    {.name = "ssubscribe", .arity = -2, .flags = CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_ssubscribe, .group = "pubsub", .since = "7.0.0", .summary = "Listens for messages published to shard channels.", .complexity = "O(N) where N is the number of shard channels to subscribe to."},
    {.name = "sunsubscribe", .arity = -1, .flags = CMD_PUBSUB | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_sunsubscribe, .group = "pubsub", .since = "7.0.0", .summary = "Stops listening to messages posted to shard channels.", .complexity = "O(N) where N is the number of shard channels to unsubscribe."},
    {.name = "spublish", .arity = 3, .flags = CMD_FAST | CMD_LOADING | CMD_STALE, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_spublish, .group = "pubsub", .since = "7.0.0", .summary = "Post a message to a shard channel", .complexity = "O(N) where N is the number of clients subscribed to the receiving shard channel."},
    {.name = "pubsub", .arity = -2, .flags = CMD_CONTAINER, .group = "pubsub", .since = "2.8.0", .summary = "A container for Pub/Sub commands.", .complexity = "Depends on subcommand.", .nsubs = 6},
        {.name = "channels", .arity = -2, .flags = CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_pubsub_channels, .group = "pubsub", .since = "2.8.0", .summary = "Returns the active channels.", .complexity = "O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)"},
        {.name = "numpat", .arity = 2, .flags = CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_pubsub_numpat, .group = "pubsub", .since = "2.8.0", .summary = "Returns a count of unique pattern subscriptions."},
        {.name = "numsub", .arity = -2, .flags = CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_pubsub_numsub, .group = "pubsub", .since = "2.8.0", .summary = "Returns a count of subscribers to channels.", .complexity = "O(N) for the NUMSUB subcommand, where N is the number of requested channels"},
        {.name = "shardchannels", .arity = -2, .flags = CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_pubsub_shardchannels, .group = "pubsub", .since = "7.0.0", .summary = "Returns the active shard channels.", .complexity = "O(N) where N is the number of active shard channels, and assuming constant time pattern matching (relatively short shard channels)."},
        {.name = "shardnumsub", .arity = -2, .flags = CMD_PUBSUB | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_pubsub_shardnumsub, .group = "pubsub", .since = "7.0.0", .summary = "Returns the count of subscribers of shard channels.", .complexity = "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard channels"},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_pubsub_help, .group = "pubsub", .since = "6.2.0", .summary = "Returns helpful text about the different subcommands."},
    {.name = "eval", .arity = -3, .flags = CMD_NOSCRIPT | CMD_STALE | CMD_SKIP_MONITOR, .fn = cmd_eval, .group = "scripting", .since = "2.6.0", .summary = "Executes a server-side Lua script.", .complexity = "Depends on the script that is executed."},
    {.name = "evalsha", .arity = -3, .flags = CMD_NOSCRIPT | CMD_STALE | CMD_SKIP_MONITOR, .fn = cmd_evalsha, .group = "scripting", .since = "2.6.0", .summary = "Executes a server-side Lua script by SHA1 digest.", .complexity = "Depends on the script that is executed."},
    {.name = "eval_ro", .arity = -3, .flags = CMD_NOSCRIPT | CMD_STALE | CMD_READONLY | CMD_SKIP_MONITOR, .fn = cmd_eval_ro, .group = "scripting", .since = "7.0.0", .summary = "Executes a read-only server-side Lua script.", .complexity = "Depends on the script that is executed."},
    {.name = "evalsha_ro", .arity = -3, .flags = CMD_NOSCRIPT | CMD_STALE | CMD_READONLY | CMD_SKIP_MONITOR, .fn = cmd_evalsha_ro, .group = "scripting", .since = "7.0.0", .summary = "Executes a read-only server-side Lua script by SHA1 digest.", .complexity = "Depends on the script that is executed."},
    {.name = "script", .arity = -2, .flags = CMD_CONTAINER, .group = "scripting", .since = "2.6.0", .summary = "A container for Lua scripts management commands.", .complexity = "Depends on subcommand.", .nsubs = 5},
        {.name = "load", .arity = 3, .flags = CMD_NOSCRIPT | CMD_STALE | CMD_EXCL | CMD_SUB, .fn = cmd_script_load, .group = "scripting", .since = "2.6.0", .summary = "Loads a server-side Lua script to the script cache.", .complexity = "O(N) with N being the length in bytes of the script body."},
        {.name = "exists", .arity = -3, .flags = CMD_NOSCRIPT | CMD_EXCL | CMD_SUB, .fn = cmd_script_exists, .group = "scripting", .since = "2.6.0", .summary = "Determines whether server-side Lua scripts exist in the script cache.", .complexity = "O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation)."},
        {.name = "flush", .arity = -2, .flags = CMD_NOSCRIPT | CMD_EXCL | CMD_SUB, .fn = cmd_script_flush, .group = "scripting", .since = "2.6.0", .summary = "Removes all server-side Lua scripts from the script cache.", .complexity = "O(N) with N being the number of scripts in cache"},
        {.name = "kill", .arity = 2, .flags = CMD_ALLOW_BUSY | CMD_NOSCRIPT | CMD_SUB, .fn = cmd_script_kill, .group = "scripting", .since = "2.6.0", .summary = "Terminates a server-side Lua script during execution."},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_script_help, .group = "scripting", .since = "5.0.0", .summary = "Returns helpful text about the different subcommands."},
    {.name = "fcall", .arity = -3, .flags = CMD_NOSCRIPT | CMD_STALE | CMD_SKIP_MONITOR, .fn = cmd_fcall, .group = "scripting", .since = "7.0.0", .summary = "Invokes a function.", .complexity = "Depends on the function that is executed."},
    {.name = "fcall_ro", .arity = -3, .flags = CMD_NOSCRIPT | CMD_STALE | CMD_READONLY | CMD_SKIP_MONITOR, .fn = cmd_fcall_ro, .group = "scripting", .since = "7.0.0", .summary = "Invokes a read-only function.", .complexity = "Depends on the function that is executed."},
    {.name = "function", .arity = -2, .flags = CMD_CONTAINER, .group = "scripting", .since = "7.0.0", .summary = "A container for function commands.", .complexity = "Depends on subcommand.", .nsubs = 9},
        {.name = "load", .arity = -3, .flags = CMD_WRITE | CMD_NOSCRIPT | CMD_EXCL | CMD_SUB | CMD_DENYOOM, .fn = cmd_function_load, .group = "scripting", .since = "7.0.0", .summary = "Creates a library.", .complexity = "O(1) (considering compilation time is redundant)"},
        {.name = "delete", .arity = 3, .flags = CMD_WRITE | CMD_NOSCRIPT | CMD_EXCL | CMD_SUB, .fn = cmd_function_delete, .group = "scripting", .since = "7.0.0", .summary = "Deletes a library and its functions."},
        {.name = "list", .arity = -2, .flags = CMD_NOSCRIPT | CMD_EXCL | CMD_SUB, .fn = cmd_function_list, .group = "scripting", .since = "7.0.0", .summary = "Returns information about all libraries.", .complexity = "O(N) where N is the number of functions"},
        {.name = "stats", .arity = 2, .flags = CMD_ALLOW_BUSY | CMD_NOSCRIPT | CMD_SUB, .fn = cmd_function_stats, .group = "scripting", .since = "7.0.0", .summary = "Returns information about a function during execution."},
        {.name = "flush", .arity = -2, .flags = CMD_WRITE | CMD_NOSCRIPT | CMD_EXCL | CMD_SUB, .fn = cmd_function_flush, .group = "scripting", .since = "7.0.0", .summary = "Deletes all libraries and functions.", .complexity = "O(N) where N is the number of functions deleted"},
        {.name = "kill", .arity = 2, .flags = CMD_ALLOW_BUSY | CMD_NOSCRIPT | CMD_SUB, .fn = cmd_function_kill, .group = "scripting", .since = "7.0.0", .summary = "Terminates a function during execution."},
        {.name = "dump", .arity = 2, .flags = CMD_NOSCRIPT | CMD_EXCL | CMD_SUB, .fn = cmd_function_dump, .group = "scripting", .since = "7.0.0", .summary = "Dumps all libraries into a serialized binary payload.", .complexity = "O(N) where N is the number of functions"},
        {.name = "restore", .arity = -3, .flags = CMD_WRITE | CMD_NOSCRIPT | CMD_EXCL | CMD_SUB | CMD_DENYOOM, .fn = cmd_function_restore, .group = "scripting", .since = "7.0.0", .summary = "Restores all libraries from a payload.", .complexity = "O(N) where N is the number of functions on the payload"},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_function_help, .group = "scripting", .since = "7.0.0", .summary = "Returns helpful text about the different subcommands."},
    {.name = "slowlog", .arity = -2, .flags = CMD_CONTAINER, .group = "server", .since = "2.2.12", .summary = "A container for slow log commands.", .complexity = "Depends on subcommand.", .nsubs = 4},
        {.name = "get", .arity = -2, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_slowlog_get, .group = "server", .since = "2.2.12", .summary = "Returns the slow log's entries.", .complexity = "O(N) where N is the number of entries returned"},
        {.name = "len", .arity = 2, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_slowlog_len, .group = "server", .since = "2.2.12", .summary = "Returns the number of entries in the slow log."},
        {.name = "reset", .arity = 2, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_slowlog_reset, .group = "server", .since = "2.2.12", .summary = "Clears all entries from the slow log.", .complexity = "O(N) where N is the number of entries in the slowlog"},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_slowlog_help, .group = "server", .since = "6.2.0", .summary = "Show helpful text about the different subcommands"},
    {.name = "latency", .arity = -2, .flags = CMD_CONTAINER, .group = "server", .since = "2.8.13", .summary = "A container for latency diagnostics commands.", .complexity = "Depends on subcommand.", .nsubs = 6},
        {.name = "latest", .arity = 2, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_latency_latest, .group = "server", .since = "2.8.13", .summary = "Returns the latest latency samples for all events."},
        {.name = "history", .arity = 3, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_latency_history, .group = "server", .since = "2.8.13", .summary = "Returns timestamp-latency samples for an event."},
        {.name = "reset", .arity = -2, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_latency_reset, .group = "server", .since = "2.8.13", .summary = "Resets the latency data for one or more events."},
        {.name = "doctor", .arity = 2, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_latency_doctor, .group = "server", .since = "2.8.13", .summary = "Returns a human-readable latency analysis report."},
        {.name = "histogram", .arity = -2, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_SUB | CMD_NOSCRIPT, .fn = cmd_latency_histogram, .group = "server", .since = "7.0.0", .summary = "Returns the cumulative distribution of latencies of a subset or all commands.", .complexity = "O(N) where N is the number of commands with latency information being retrieved."},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_latency_help, .group = "server", .since = "2.8.13", .summary = "Returns helpful text about the different subcommands."},
    {.name = "monitor", .arity = 1, .flags = CMD_ADMIN | CMD_LOADING | CMD_STALE | CMD_NOSCRIPT, .fn = cmd_monitor, .group = "server", .since = "1.0.0", .summary = "Listens for all requests received by the server in real-time."},
    {.name = "get", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_get, .group = "string", .since = "1.0.0", .summary = "Returns the string value of a key."},
    {.name = "set", .arity = -3, .flags = RW | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_set, .group = "string", .since = "1.0.0", .summary = "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."},
    {.name = "setnx", .arity = 3, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_setnx, .group = "string", .since = "1.0.0", .summary = "Set the string value of a key only when the key doesn't exist."},
    {.name = "setex", .arity = 4, .flags = RW | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_setex, .group = "string", .since = "2.0.0", .summary = "Sets the string value and expiration time of a key. Creates the key if it doesn't exist."},
    {.name = "psetex", .arity = 4, .flags = RW | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_psetex, .group = "string", .since = "2.6.0", .summary = "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist."},
    {.name = "getset", .arity = 3, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_getset, .group = "string", .since = "1.0.0", .summary = "Returns the previous string value of a key after setting it to a new value."},
    {.name = "getdel", .arity = 2, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_getdel, .group = "string", .since = "6.2.0", .summary = "Returns the string value of a key after deleting the key."},
    {.name = "getex", .arity = -2, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_getex, .group = "string", .since = "6.2.0", .summary = "Returns the string value of a key after setting its expiration time."},
    {.name = "mget", .arity = -2, .flags = ROF, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_mget, .group = "string", .since = "1.0.0", .summary = "Atomically returns the string values of one or more keys.", .complexity = "O(N)"},
    {.name = "mset", .arity = -3, .flags = RW | CMD_DENYOOM, .first_key = 1, .last_key = -1, .step = 2, .fn = cmd_mset, .group = "string", .since = "1.0.1", .summary = "Atomically creates or modifies the string values of one or more keys.", .complexity = "O(N)"},
    {.name = "msetnx", .arity = -3, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = -1, .step = 2, .fn = cmd_msetnx, .group = "string", .since = "1.0.1", .summary = "Atomically modifies the string values of one or more keys only when all keys don't exist.", .complexity = "O(N)"},
    {.name = "append", .arity = 3, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_append, .group = "string", .since = "2.0.0", .summary = "Appends a string to the value of a key. Creates the key if it doesn't exist."},
    {.name = "strlen", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_strlen, .group = "string", .since = "2.2.0", .summary = "Returns the length of a string value."},
    {.name = "getrange", .arity = 4, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_getrange, .group = "string", .since = "2.4.0", .summary = "Returns a substring of the string stored at a key.", .complexity = "O(N)"},
    {.name = "substr", .arity = 4, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_getrange, .group = "string", .since = "1.0.0", .summary = "Returns a substring from a string value.", .complexity = "O(N)"},
    {.name = "setrange", .arity = 4, .flags = RW | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_setrange, .group = "string", .since = "2.2.0", .summary = "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist."},
    {.name = "setbit", .arity = 4, .flags = RW | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_setbit, .group = "bitmap", .since = "2.2.0", .summary = "Sets or clears the bit at offset of the string value. Creates the key if it doesn't exist."},
    {.name = "getbit", .arity = 3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_getbit, .group = "bitmap", .since = "2.2.0", .summary = "Returns a bit value by offset."},
    {.name = "bitcount", .arity = -2, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_bitcount, .group = "bitmap", .since = "2.6.0", .summary = "Counts the number of set bits (population counting) in a string.", .complexity = "O(N)"},
    {.name = "bitpos", .arity = -3, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_bitpos, .group = "bitmap", .since = "2.8.7", .summary = "Finds the first set (1) or clear (0) bit in a string.", .complexity = "O(N)"},
    {.name = "bitfield", .arity = -2, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_bitfield, .group = "bitmap", .since = "3.2.0", .summary = "Performs arbitrary bitfield integer operations on strings.", .complexity = "O(1) for each subcommand specified"},
    {.name = "bitfield_ro", .arity = -2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_bitfield_ro, .group = "bitmap", .since = "6.0.0", .summary = "Performs arbitrary read-only bitfield integer operations on strings.", .complexity = "O(1) for each subcommand specified"},
    {.name = "bitop", .arity = -4, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 2, .last_key = -1, .step = 1, .fn = cmd_bitop, .group = "bitmap", .since = "2.6.0", .summary = "Performs bitwise operations on multiple strings, and stores the result.", .complexity = "O(N)"},
    {.name = "lcs", .arity = -3, .flags = RO, .first_key = 1, .last_key = 2, .step = 1, .fn = cmd_lcs, .group = "string", .since = "7.0.0", .summary = "Finds the longest common substring.", .complexity = "O(N*M) where N and M are the lengths of s1 and s2, respectively"},
    {.name = "incr", .arity = 2, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_incr, .group = "string", .since = "1.0.0", .summary = "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."},
    {.name = "decr", .arity = 2, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_decr, .group = "string", .since = "1.0.0", .summary = "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."},
    {.name = "incrby", .arity = 3, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_incrby, .group = "string", .since = "1.0.0", .summary = "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist."},
    {.name = "decrby", .arity = 3, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_decrby, .group = "string", .since = "1.0.0", .summary = "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist."},
    {.name = "incrbyfloat", .arity = 3, .flags = CMD_WRITE | CMD_FAST | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_incrbyfloat, .group = "string", .since = "2.6.0", .summary = "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist."},
    {.name = "del", .arity = -2, .flags = RW, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_del, .group = "generic", .since = "1.0.0", .summary = "Deletes one or more keys.", .complexity = "O(N)"},
    {.name = "unlink", .arity = -2, .flags = RWF, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_del, .group = "generic", .since = "4.0.0", .summary = "Asynchronously deletes one or more keys.", .complexity = "O(N)"},
    {.name = "exists", .arity = -2, .flags = ROF, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_exists, .group = "generic", .since = "1.0.0", .summary = "Determines whether one or more keys exist.", .complexity = "O(N)"},
    {.name = "touch", .arity = -2, .flags = ROF, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_touch, .group = "generic", .since = "3.2.1", .summary = "Returns the number of existing keys out of those specified after updating the time they were last accessed.", .complexity = "O(N)"},
    {.name = "hset", .arity = -4, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hset, .group = "hash", .since = "2.0.0", .summary = "Creates or modifies the value of a field in a hash.", .complexity = "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs."},
    {.name = "hsetnx", .arity = 4, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hsetnx, .group = "hash", .since = "2.0.0", .summary = "Sets the value of a field in a hash only when the field doesn't exist."},
    {.name = "hmset", .arity = -4, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hmset, .group = "hash", .since = "2.0.0", .summary = "Sets the values of multiple fields.", .complexity = "O(N) where N is the number of fields being set."},
    {.name = "hget", .arity = 3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hget, .group = "hash", .since = "2.0.0", .summary = "Returns the value of a field in a hash."},
    {.name = "hmget", .arity = -3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hmget, .group = "hash", .since = "2.0.0", .summary = "Returns the values of all fields in a hash.", .complexity = "O(N) where N is the number of fields being requested."},
    {.name = "hdel", .arity = -3, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hdel, .group = "hash", .since = "2.0.0", .summary = "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.", .complexity = "O(N) where N is the number of fields to be removed."},
    {.name = "hlen", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hlen, .group = "hash", .since = "2.0.0", .summary = "Returns the number of fields in a hash."},
    {.name = "hstrlen", .arity = 3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hstrlen, .group = "hash", .since = "3.2.0", .summary = "Returns the length of the value of a field."},
    {.name = "hexists", .arity = 3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hexists, .group = "hash", .since = "2.0.0", .summary = "Determines whether a field exists in a hash."},
    {.name = "hkeys", .arity = 2, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hkeys, .group = "hash", .since = "2.0.0", .summary = "Returns all fields in a hash.", .complexity = "O(N) where N is the size of the hash."},
    {.name = "hvals", .arity = 2, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hvals, .group = "hash", .since = "2.0.0", .summary = "Returns all values in a hash.", .complexity = "O(N) where N is the size of the hash."},
    {.name = "hgetall", .arity = 2, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hgetall, .group = "hash", .since = "2.0.0", .summary = "Returns all fields and values in a hash.", .complexity = "O(N) where N is the size of the hash."},
    {.name = "hincrby", .arity = 4, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hincrby, .group = "hash", .since = "2.0.0", .summary = "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist."},
    {.name = "hincrbyfloat", .arity = 4, .flags = CMD_WRITE | CMD_FAST | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hincrbyfloat, .group = "hash", .since = "2.6.0", .summary = "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist."},
    {.name = "hrandfield", .arity = -2, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hrandfield, .group = "hash", .since = "6.2.0", .summary = "Returns one or more random fields from a hash.", .complexity = "O(N) where N is the number of fields returned"},
    {.name = "hscan", .arity = -3, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_hscan, .group = "hash", .since = "2.8.0", .summary = "Iterates over fields and values of a hash.", .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection."},
    {.name = "sadd", .arity = -3, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_sadd, .group = "set", .since = "1.0.0", .summary = "Adds one or more members to a set. Creates the key if it doesn't exist.", .complexity = "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
    {.name = "srem", .arity = -3, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_srem, .group = "set", .since = "1.0.0", .summary = "Removes one or more members from a set. Deletes the set if the last member was removed.", .complexity = "O(N) where N is the number of members to be removed."},
    {.name = "scard", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_scard, .group = "set", .since = "1.0.0", .summary = "Returns the number of members in a set."},
    {.name = "sismember", .arity = 3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_sismember, .group = "set", .since = "1.0.0", .summary = "Determines whether a member belongs to a set."},
    {.name = "smismember", .arity = -3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_smismember, .group = "set", .since = "6.2.0", .summary = "Determines whether multiple members belong to a set.", .complexity = "O(N) where N is the number of elements being checked for membership"},
    {.name = "smembers", .arity = 2, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_smembers, .group = "set", .since = "1.0.0", .summary = "Returns all members of a set.", .complexity = "O(N) where N is the set cardinality."},
    {.name = "srandmember", .arity = -2, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_srandmember, .group = "set", .since = "1.0.0", .summary = "Get one or multiple random members from a set", .complexity = "Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count."},
    {.name = "sscan", .arity = -3, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_sscan, .group = "set", .since = "2.8.0", .summary = "Iterates over members of a set.", .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection."},
    {.name = "sinter", .arity = -2, .flags = RO, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_sinter, .group = "set", .since = "1.0.0", .summary = "Returns the intersect of multiple sets.", .complexity = "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets."},
    {.name = "sunion", .arity = -2, .flags = RO, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_sunion, .group = "set", .since = "1.0.0", .summary = "Returns the union of multiple sets.", .complexity = "O(N) where N is the total number of elements in all given sets."},
    {.name = "sdiff", .arity = -2, .flags = RO, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_sdiff, .group = "set", .since = "1.0.0", .summary = "Returns the difference of multiple sets.", .complexity = "O(N) where N is the total number of elements in all given sets."},
    {.name = "sintercard", .arity = -3, .flags = RO, .first_key = 2, .last_key = -1, .step = 1, .fn = cmd_sintercard, .group = "set", .since = "7.0.0", .summary = "Returns the number of members of the intersect of multiple sets.", .complexity = "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets."},
    {.name = "sinterstore", .arity = -3, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_sinterstore, .group = "set", .since = "1.0.0", .summary = "Stores the intersect of multiple sets in a key.", .complexity = "O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets."},
    {.name = "sunionstore", .arity = -3, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_sunionstore, .group = "set", .since = "1.0.0", .summary = "Stores the union of multiple sets in a key.", .complexity = "O(N) where N is the total number of elements in all given sets."},
    {.name = "sdiffstore", .arity = -3, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = -1, .step = 1, .fn = cmd_sdiffstore, .group = "set", .since = "1.0.0", .summary = "Stores the difference of multiple sets in a key.", .complexity = "O(N) where N is the total number of elements in all given sets."},
    {.name = "spop", .arity = -2, .flags = CMD_WRITE | CMD_FAST | CMD_EXCL, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_spop, .group = "set", .since = "1.0.0", .summary = "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.", .complexity = "Without the count argument O(1), otherwise O(N) where N is the value of the passed count."},
    {.name = "smove", .arity = 4, .flags = CMD_WRITE | CMD_FAST | CMD_EXCL, .first_key = 1, .last_key = 2, .step = 1, .fn = cmd_smove, .group = "set", .since = "1.0.0", .summary = "Moves a member from one set to another."},
    {.name = "lpush", .arity = -3, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_lpush, .group = "list", .since = "1.0.0", .summary = "Prepends one or more elements to a list. Creates the key if it doesn't exist.", .complexity = "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
    {.name = "rpush", .arity = -3, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_rpush, .group = "list", .since = "1.0.0", .summary = "Appends one or more elements to a list. Creates the key if it doesn't exist.", .complexity = "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
    {.name = "lpushx", .arity = -3, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_lpushx, .group = "list", .since = "2.2.0", .summary = "Prepends one or more elements to a list only when the list exists.", .complexity = "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
    {.name = "rpushx", .arity = -3, .flags = RWF | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_rpushx, .group = "list", .since = "2.2.0", .summary = "Appends an element to a list only when the list exists.", .complexity = "O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments."},
    {.name = "llen", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_llen, .group = "list", .since = "1.0.0", .summary = "Returns the length of a list."},
    {.name = "lpop", .arity = -2, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_lpop, .group = "list", .since = "1.0.0", .summary = "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.", .complexity = "O(N) where N is the number of elements returned"},
    {.name = "rpop", .arity = -2, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_rpop, .group = "list", .since = "1.0.0", .summary = "Returns and removes the last elements of a list. Deletes the list if the last element was popped.", .complexity = "O(N) where N is the number of elements returned"},
    {.name = "lrange", .arity = 4, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_lrange, .group = "list", .since = "1.0.0", .summary = "Returns a range of elements from a list.", .complexity = "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range."},
    {.name = "lindex", .arity = 3, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_lindex, .group = "list", .since = "1.0.0", .summary = "Returns an element from a list by its index.", .complexity = "O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1)."},
    {.name = "lpos", .arity = -3, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_lpos, .group = "list", .since = "6.0.6", .summary = "Returns the index of matching elements in a list.", .complexity = "O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time."},
    {.name = "lset", .arity = 4, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_lset, .group = "list", .since = "1.0.0", .summary = "Sets the value of an element in a list by its index.", .complexity = "O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1)."},
    {.name = "linsert", .arity = 5, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_linsert, .group = "list", .since = "2.2.0", .summary = "Inserts an element before or after another element in a list.", .complexity = "O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N)."},
    {.name = "lrem", .arity = 4, .flags = CMD_WRITE | CMD_EXCL, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_lrem, .group = "list", .since = "1.0.0", .summary = "Removes elements from a list. Deletes the list if the last element was removed.", .complexity = "O(N+M) where N is the length of the list and M is the number of elements removed."},
    {.name = "ltrim", .arity = 4, .flags = CMD_WRITE | CMD_EXCL, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_ltrim, .group = "list", .since = "1.0.0", .summary = "Removes elements from both ends a list. Deletes the list if all elements were trimmed.", .complexity = "O(N) where N is the number of elements to be removed by the operation."},
    {.name = "lmove", .arity = 5, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 2, .step = 1, .fn = cmd_lmove, .group = "list", .since = "6.2.0", .summary = "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved."},
    {.name = "rpoplpush", .arity = 3, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 2, .step = 1, .fn = cmd_rpoplpush, .group = "list", .since = "1.2.0", .summary = "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped."},
    {.name = "lmpop", .arity = -4, .flags = CMD_WRITE | CMD_EXCL, .first_key = 2, .last_key = -1, .step = 1, .fn = cmd_lmpop, .group = "list", .since = "7.0.0", .summary = "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.", .complexity = "O(N+M) where N is the number of provided keys and M is the number of elements returned."},
    {.name = "blpop", .arity = -3, .flags = CMD_WRITE | CMD_EXCL | CMD_NOSCRIPT | CMD_BLOCKING, .first_key = 1, .last_key = -2, .step = 1, .fn = cmd_blpop, .group = "list", .since = "2.0.0", .summary = "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", .complexity = "O(N) where N is the number of provided keys."},
    {.name = "brpop", .arity = -3, .flags = CMD_WRITE | CMD_EXCL | CMD_NOSCRIPT | CMD_BLOCKING, .first_key = 1, .last_key = -2, .step = 1, .fn = cmd_brpop, .group = "list", .since = "2.0.0", .summary = "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", .complexity = "O(N) where N is the number of provided keys."},
    {.name = "blmpop", .arity = -5, .flags = CMD_WRITE | CMD_EXCL | CMD_BLOCKING, .first_key = 3, .last_key = -1, .step = 1, .fn = cmd_blmpop, .group = "list", .since = "7.0.0", .summary = "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.", .complexity = "O(N+M) where N is the number of provided keys and M is the number of elements returned."},
    {.name = "blmove", .arity = 6, .flags = CMD_WRITE | CMD_EXCL | CMD_NOSCRIPT | CMD_BLOCKING | CMD_DENYOOM, .first_key = 1, .last_key = 2, .step = 1, .fn = cmd_blmove, .group = "list", .since = "6.2.0", .summary = "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved."},
    {.name = "brpoplpush", .arity = 4, .flags = CMD_WRITE | CMD_EXCL | CMD_NOSCRIPT | CMD_BLOCKING | CMD_DENYOOM, .first_key = 1, .last_key = 2, .step = 1, .fn = cmd_brpoplpush, .group = "list", .since = "2.2.0", .summary = "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped."},
    {.name = "zadd", .arity = -4, .flags = CMD_WRITE | CMD_EXCL | CMD_FAST | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zadd, .group = "sorted-set", .since = "1.2.0", .summary = "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.", .complexity = "O(log(N)) for each item added, where N is the number of elements in the sorted set."},
    {.name = "zincrby", .arity = 4, .flags = CMD_WRITE | CMD_EXCL | CMD_FAST | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zincrby, .group = "sorted-set", .since = "1.2.0", .summary = "Increments the score of a member in a sorted set.", .complexity = "O(log(N)) where N is the number of elements in the sorted set."},
    {.name = "zrem", .arity = -3, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zrem, .group = "sorted-set", .since = "1.2.0", .summary = "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.", .complexity = "O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed."},
    {.name = "zcard", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zcard, .group = "sorted-set", .since = "1.2.0", .summary = "Returns the number of members in a sorted set."},
    {.name = "zscore", .arity = 3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zscore, .group = "sorted-set", .since = "1.2.0", .summary = "Returns the score of a member in a sorted set."},
    {.name = "zmscore", .arity = -3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zmscore, .group = "sorted-set", .since = "6.2.0", .summary = "Returns the score of one or more members in a sorted set.", .complexity = "O(N) where N is the number of members being requested."},
    {.name = "zrank", .arity = 3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zrank, .group = "sorted-set", .since = "2.0.0", .summary = "Returns the index of a member in a sorted set ordered by ascending scores.", .complexity = "O(log(N))"},
    {.name = "zrevrank", .arity = 3, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zrevrank, .group = "sorted-set", .since = "2.0.0", .summary = "Returns the index of a member in a sorted set ordered by descending scores.", .complexity = "O(log(N))"},
    {.name = "zcount", .arity = 4, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zcount, .group = "sorted-set", .since = "2.0.0", .summary = "Returns the count of members in a sorted set that have scores within a range.", .complexity = "O(log(N)) with N being the number of elements in the sorted set."},
    {.name = "zlexcount", .arity = 4, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zlexcount, .group = "sorted-set", .since = "2.8.9", .summary = "Returns the number of members in a sorted set within a lexicographical range.", .complexity = "O(log(N)) with N being the number of elements in the sorted set."},
    {.name = "zrange", .arity = -4, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zrange, .group = "sorted-set", .since = "1.2.0", .summary = "Returns members in a sorted set within a range of indexes.", .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned."},
    {.name = "zrevrange", .arity = -4, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zrevrange, .group = "sorted-set", .since = "1.2.0", .summary = "Returns members in a sorted set within a range of indexes in reverse order.", .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned."},
    {.name = "zrangebyscore", .arity = -4, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zrangebyscore, .group = "sorted-set", .since = "1.0.5", .summary = "Returns members in a sorted set within a range of scores.", .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N))."},
    {.name = "zrevrangebyscore", .arity = -4, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zrevrangebyscore, .group = "sorted-set", .since = "2.2.0", .summary = "Returns members in a sorted set within a range of scores in reverse order.", .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N))."},
    {.name = "zrangebylex", .arity = -4, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zrangebylex, .group = "sorted-set", .since = "2.8.9", .summary = "Returns members in a sorted set within a lexicographical range.", .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N))."},
    {.name = "zrevrangebylex", .arity = -4, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zrevrangebylex, .group = "sorted-set", .since = "2.8.9", .summary = "Returns members in a sorted set within a lexicographical range in reverse order.", .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N))."},
    {.name = "zrangestore", .arity = -5, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 2, .step = 1, .fn = cmd_zrangestore, .group = "sorted-set", .since = "6.2.0", .summary = "Stores a range of members from sorted set in a key.", .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key."},
    {.name = "zremrangebyrank", .arity = 4, .flags = CMD_WRITE | CMD_EXCL, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zremrangebyrank, .group = "sorted-set", .since = "2.0.0", .summary = "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.", .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation."},
    {.name = "zremrangebyscore", .arity = 4, .flags = CMD_WRITE | CMD_EXCL, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zremrangebyscore, .group = "sorted-set", .since = "1.2.0", .summary = "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.", .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation."},
    {.name = "zremrangebylex", .arity = 4, .flags = CMD_WRITE | CMD_EXCL, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zremrangebylex, .group = "sorted-set", .since = "2.8.9", .summary = "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.", .complexity = "O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation."},
    {.name = "zpopmin", .arity = -2, .flags = CMD_WRITE | CMD_EXCL | CMD_FAST, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zpopmin, .group = "sorted-set", .since = "5.0.0", .summary = "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", .complexity = "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped."},
    {.name = "zpopmax", .arity = -2, .flags = CMD_WRITE | CMD_EXCL | CMD_FAST, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zpopmax, .group = "sorted-set", .since = "5.0.0", .summary = "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.", .complexity = "O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped."},
    {.name = "zrandmember", .arity = -2, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zrandmember, .group = "sorted-set", .since = "6.2.0", .summary = "Returns one or more random members from a sorted set.", .complexity = "O(N) where N is the number of members returned"},
    {.name = "zscan", .arity = -3, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zscan, .group = "sorted-set", .since = "2.8.0", .summary = "Iterates over members and scores of a sorted set.", .complexity = "O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection."},
    {.name = "zunion", .arity = -3, .flags = RO, .first_key = 2, .last_key = -1, .step = 1, .fn = cmd_zunion, .group = "sorted-set", .since = "6.2.0", .summary = "Returns the union of multiple sorted sets.", .complexity = "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set."},
    {.name = "zinter", .arity = -3, .flags = RO, .first_key = 2, .last_key = -1, .step = 1, .fn = cmd_zinter, .group = "sorted-set", .since = "6.2.0", .summary = "Returns the intersect of multiple sorted sets.", .complexity = "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set."},
    {.name = "zdiff", .arity = -3, .flags = RO, .first_key = 2, .last_key = -1, .step = 1, .fn = cmd_zdiff, .group = "sorted-set", .since = "6.2.0", .summary = "Returns the difference between multiple sorted sets.", .complexity = "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set."},
    {.name = "zintercard", .arity = -3, .flags = RO, .first_key = 2, .last_key = -1, .step = 1, .fn = cmd_zintercard, .group = "sorted-set", .since = "7.0.0", .summary = "Returns the number of members of the intersect of multiple sorted sets.", .complexity = "O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets."},
    {.name = "zunionstore", .arity = -4, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zunionstore, .group = "sorted-set", .since = "2.0.0", .summary = "Stores the union of multiple sorted sets in a key.", .complexity = "O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set."},
    {.name = "zinterstore", .arity = -4, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zinterstore, .group = "sorted-set", .since = "2.0.0", .summary = "Stores the intersect of multiple sorted sets in a key.", .complexity = "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set."},
    {.name = "zdiffstore", .arity = -4, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_zdiffstore, .group = "sorted-set", .since = "6.2.0", .summary = "Stores the difference of multiple sorted sets in a key.", .complexity = "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set."},
    {.name = "zmpop", .arity = -4, .flags = CMD_WRITE | CMD_EXCL, .first_key = 2, .last_key = -1, .step = 1, .fn = cmd_zmpop, .group = "sorted-set", .since = "7.0.0", .summary = "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.", .complexity = "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped."},
    {.name = "bzpopmin", .arity = -3, .flags = CMD_WRITE | CMD_EXCL | CMD_NOSCRIPT | CMD_BLOCKING | CMD_FAST, .first_key = 1, .last_key = -2, .step = 1, .fn = cmd_bzpopmin, .group = "sorted-set", .since = "5.0.0", .summary = "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", .complexity = "O(log(N)) with N being the number of elements in the sorted set."},
    {.name = "bzpopmax", .arity = -3, .flags = CMD_WRITE | CMD_EXCL | CMD_NOSCRIPT | CMD_BLOCKING | CMD_FAST, .first_key = 1, .last_key = -2, .step = 1, .fn = cmd_bzpopmax, .group = "sorted-set", .since = "5.0.0", .summary = "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.", .complexity = "O(log(N)) with N being the number of elements in the sorted set."},
    {.name = "bzmpop", .arity = -5, .flags = CMD_WRITE | CMD_EXCL | CMD_BLOCKING, .first_key = 3, .last_key = -1, .step = 1, .fn = cmd_bzmpop, .group = "sorted-set", .since = "7.0.0", .summary = "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.", .complexity = "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped."},
    {.name = "sort", .arity = -2, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_sort, .group = "generic", .since = "1.0.0", .summary = "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.", .complexity = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N)."},
    {.name = "sort_ro", .arity = -2, .flags = CMD_READONLY | CMD_EXCL, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_sort_ro, .group = "generic", .since = "7.0.0", .summary = "Returns the sorted elements of a list, a set, or a sorted set.", .complexity = "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N)."},
    {.name = "type", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_type, .group = "generic", .since = "1.0.0", .summary = "Determines the type of value stored at a key."},
    {.name = "expire", .arity = -3, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_expire, .group = "generic", .since = "1.0.0", .summary = "Sets the expiration time of a key in seconds."},
    {.name = "pexpire", .arity = -3, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_pexpire, .group = "generic", .since = "2.6.0", .summary = "Sets the expiration time of a key in milliseconds."},
    {.name = "expireat", .arity = -3, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_expireat, .group = "generic", .since = "1.2.0", .summary = "Sets the expiration time of a key to a Unix timestamp."},
    {.name = "pexpireat", .arity = -3, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_pexpireat, .group = "generic", .since = "2.6.0", .summary = "Sets the expiration time of a key to a Unix milliseconds timestamp."},
    {.name = "ttl", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_ttl, .group = "generic", .since = "1.0.0", .summary = "Returns the expiration time in seconds of a key."},
    {.name = "pttl", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_pttl, .group = "generic", .since = "2.6.0", .summary = "Returns the expiration time in milliseconds of a key."},
    {.name = "expiretime", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_expiretime, .group = "generic", .since = "7.0.0", .summary = "Returns the expiration time of a key as a Unix timestamp."},
    {.name = "pexpiretime", .arity = 2, .flags = ROF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_pexpiretime, .group = "generic", .since = "7.0.0", .summary = "Returns the expiration time of a key as a Unix milliseconds timestamp."},
    {.name = "persist", .arity = 2, .flags = RWF, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_persist, .group = "generic", .since = "2.2.0", .summary = "Removes the expiration time of a key."},
    {.name = "rename", .arity = 3, .flags = CMD_WRITE | CMD_EXCL, .first_key = 1, .last_key = 2, .step = 1, .fn = cmd_rename, .group = "generic", .since = "1.0.0", .summary = "Renames a key and overwrites the destination."},
    {.name = "renamenx", .arity = 3, .flags = CMD_WRITE | CMD_FAST | CMD_EXCL, .first_key = 1, .last_key = 2, .step = 1, .fn = cmd_renamenx, .group = "generic", .since = "1.0.0", .summary = "Renames a key only when the target key name doesn't exist."},
    {.name = "copy", .arity = -3, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 2, .step = 1, .fn = cmd_copy, .group = "generic", .since = "6.2.0", .summary = "Copies the value of a key to a new key."},
    {.name = "move", .arity = 3, .flags = CMD_WRITE | CMD_FAST | CMD_EXCL, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_move, .group = "generic", .since = "1.0.0", .summary = "Moves a key to another database."},
    {.name = "dump", .arity = 2, .flags = RO, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_dump, .group = "generic", .since = "2.6.0", .summary = "Returns a serialized representation of the value stored at a key.", .complexity = "O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1)."},
    {.name = "restore", .arity = -4, .flags = CMD_WRITE | CMD_EXCL | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_restore, .group = "generic", .since = "2.6.0", .summary = "Creates a key from the serialized representation of a value.", .complexity = "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N))."},
    {.name = "object", .arity = -2, .flags = CMD_CONTAINER, .group = "generic", .since = "2.2.3", .summary = "A container for object introspection commands.", .complexity = "Depends on subcommand.", .nsubs = 5},
        {.name = "encoding", .arity = 3, .flags = RO | CMD_SUB, .first_key = 2, .last_key = 2, .step = 1, .fn = cmd_object_encoding, .group = "generic", .since = "2.2.3", .summary = "Returns the internal encoding of a Redis object."},
        {.name = "freq", .arity = 3, .flags = RO | CMD_SUB, .first_key = 2, .last_key = 2, .step = 1, .fn = cmd_object_freq, .group = "generic", .since = "4.0.0", .summary = "Returns the logarithmic access frequency counter of a Redis object."},
        {.name = "idletime", .arity = 3, .flags = RO | CMD_SUB, .first_key = 2, .last_key = 2, .step = 1, .fn = cmd_object_idletime, .group = "generic", .since = "2.2.3", .summary = "Returns the time since the last access to a Redis object."},
        {.name = "refcount", .arity = 3, .flags = RO | CMD_SUB, .first_key = 2, .last_key = 2, .step = 1, .fn = cmd_object_refcount, .group = "generic", .since = "2.2.3", .summary = "Returns the reference count of a value of a key."},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_object_help, .group = "generic", .since = "6.2.0", .summary = "Returns helpful text about the different subcommands."},
    {.name = "keys", .arity = 2, .flags = CMD_READONLY | CMD_EXCL, .fn = cmd_keys, .group = "generic", .since = "1.0.0", .summary = "Returns all key names that match a pattern.", .complexity = "O(N)"},
    {.name = "scan", .arity = -2, .flags = CMD_READONLY | CMD_EXCL, .fn = cmd_scan, .group = "generic", .since = "2.8.0", .summary = "Iterates over the key names in the database.", .complexity = "O(1) for every call. O(N) for a complete iteration."},
    {.name = "randomkey", .arity = 1, .flags = CMD_READONLY | CMD_EXCL, .fn = cmd_randomkey, .group = "generic", .since = "1.0.0", .summary = "Returns a random key name from the database."},
    {.name = "dbsize", .arity = 1, .flags = CMD_READONLY | CMD_FAST | CMD_EXCL, .fn = cmd_dbsize, .group = "server", .since = "1.0.0", .summary = "Returns the number of keys in the database."},
    {.name = "flushdb", .arity = -1, .flags = CMD_WRITE | CMD_EXCL, .fn = cmd_flushall, .group = "server", .since = "1.0.0", .summary = "Removes all keys from the current database.", .complexity = "O(N)"},
    {.name = "flushall", .arity = -1, .flags = CMD_WRITE | CMD_EXCL, .fn = cmd_flushall, .group = "server", .since = "1.0.0", .summary = "Removes all keys from all databases.", .complexity = "O(N)"},
    {.name = "lastsave", .arity = 1, .flags = CONN_F, .fn = cmd_lastsave, .group = "server", .since = "1.0.0", .summary = "Returns the Unix timestamp of the last successful save to disk."},
    {.name = "save", .arity = 1, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_EXCL | CMD_NOMULTI | CMD_NO_ASYNC_LOADING, .fn = cmd_save, .group = "server", .since = "1.0.0", .summary = "Synchronously saves the database(s) to disk.", .complexity = "O(N) where N is the total number of keys in all databases"},
    {.name = "bgsave", .arity = -1, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_EXCL | CMD_NO_ASYNC_LOADING, .fn = cmd_bgsave, .group = "server", .since = "1.0.0", .summary = "Asynchronously saves the database(s) to disk.", .complexity = "O(1)"},
    {.name = "role", .arity = 1, .flags = CONN_F | CMD_NOSCRIPT, .fn = cmd_role, .group = "server", .since = "2.8.12", .summary = "Returns the replication role."},
    {.name = "wait", .arity = 3, .flags = CMD_NOSCRIPT, .fn = cmd_wait, .group = "generic", .since = "3.0.0", .summary = "Blocks until the asynchronous replication of all preceding write commands sent by the connection is completed."},
    {.name = "swapdb", .arity = 3, .flags = CMD_WRITE | CMD_FAST | CMD_EXCL, .fn = cmd_swapdb, .group = "server", .since = "4.0.0", .summary = "Swaps two Redis databases.", .complexity = "O(N)"},
    {.name = "time", .arity = 1, .flags = CONN_F, .fn = cmd_time, .group = "server", .since = "2.6.0", .summary = "Returns the server time."},
    {.name = "info", .arity = -1, .flags = CMD_LOADING | CMD_STALE | CMD_EXCL, .fn = cmd_info, .group = "server", .since = "1.0.0", .summary = "Returns information and statistics about the server.", .complexity = "O(1)"},
    {.name = "acl", .arity = -2, .flags = CMD_CONTAINER, .group = "server", .since = "6.0.0", .summary = "A container for Access List Control commands.", .complexity = "Depends on subcommand.", .nsubs = 13},
        {.name = "cat", .arity = -2, .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_cat, .group = "server", .since = "6.0.0", .summary = "Lists the ACL categories, or the commands inside a category.", .complexity = "O(1) since the categories and commands are a fixed set."},
        {.name = "deluser", .arity = -3, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_deluser, .group = "server", .since = "6.0.0", .summary = "Deletes ACL users, and terminates their connections.", .complexity = "O(1) amortized time considering the typical user."},
        {.name = "dryrun", .arity = -4, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_dryrun, .group = "server", .since = "7.0.0", .summary = "Simulates the execution of a command by a user, without executing the command.", .complexity = "O(1)."},
        {.name = "genpass", .arity = -2, .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_genpass, .group = "server", .since = "6.0.0", .summary = "Generates a pseudorandom, secure password that can be used to identify ACL users."},
        {.name = "getuser", .arity = 3, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_getuser, .group = "server", .since = "6.0.0", .summary = "Lists the ACL rules of a user.", .complexity = "O(N). Where N is the number of password, command and pattern rules that the user has."},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_help, .group = "server", .since = "6.0.0", .summary = "Returns helpful text about the different subcommands."},
        {.name = "list", .arity = 2, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_list, .group = "server", .since = "6.0.0", .summary = "Dumps the effective rules in ACL file format.", .complexity = "O(N). Where N is the number of configured users."},
        {.name = "load", .arity = 2, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_load, .group = "server", .since = "6.0.0", .summary = "Reloads the rules from the configured ACL file.", .complexity = "O(N). Where N is the number of configured users."},
        {.name = "log", .arity = -2, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_log, .group = "server", .since = "6.0.0", .summary = "Lists recent security events generated due to commands rejected by ACL rules.", .complexity = "O(N) with N being the number of entries shown."},
        {.name = "save", .arity = 2, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_save, .group = "server", .since = "6.0.0", .summary = "Saves the effective ACL rules in the configured ACL file.", .complexity = "O(N). Where N is the number of configured users."},
        {.name = "setuser", .arity = -3, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_setuser, .group = "server", .since = "6.0.0", .summary = "Creates and modifies an ACL user and its rules.", .complexity = "O(N). Where N is the number of rules provided."},
        {.name = "users", .arity = 2, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_users, .group = "server", .since = "6.0.0", .summary = "Lists all ACL users.", .complexity = "O(N). Where N is the number of configured users."},
        {.name = "whoami", .arity = 2, .flags = CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_acl_whoami, .group = "server", .since = "6.0.0", .summary = "Returns the authenticated username of the current connection."},
    {.name = "config", .arity = -2, .flags = CMD_CONTAINER, .group = "server", .since = "2.0.0", .summary = "A container for server configuration commands.", .complexity = "Depends on subcommand.", .nsubs = 5},
        {.name = "get", .arity = -3, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_EXCL | CMD_SUB, .fn = cmd_config_get, .group = "server", .since = "2.0.0", .summary = "Returns the effective values of configuration parameters.", .complexity = "O(N)"},
        {.name = "set", .arity = -4, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_EXCL | CMD_SUB, .fn = cmd_config_set, .group = "server", .since = "2.0.0", .summary = "Sets configuration parameters in-flight.", .complexity = "O(N)"},
        {.name = "resetstat", .arity = 2, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_EXCL | CMD_SUB, .fn = cmd_config_resetstat, .group = "server", .since = "2.0.0", .summary = "Resets the server's statistics."},
        {.name = "rewrite", .arity = 2, .flags = CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_config_rewrite, .group = "server", .since = "2.8.0", .summary = "Persists the effective configuration to file."},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_config_help, .group = "server", .since = "5.0.0", .summary = "Returns helpful text about the different subcommands."},
    {.name = "command", .arity = -1, .flags = CMD_CONTAINER | CMD_LOADING | CMD_STALE, .fn = cmd_command, .group = "server", .since = "2.8.13", .summary = "Returns detailed information about all commands.", .complexity = "O(N)", .nsubs = 7},
        {.name = "count", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_command_count, .group = "server", .since = "2.8.13", .summary = "Returns a count of commands."},
        {.name = "info", .arity = -2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_command_info, .group = "server", .since = "2.8.13", .summary = "Returns information about one, multiple or all commands.", .complexity = "O(N)"},
        {.name = "docs", .arity = -2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_command_docs, .group = "server", .since = "7.0.0", .summary = "Returns documentary information about one, multiple or all commands.", .complexity = "O(N)"},
        {.name = "list", .arity = -2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_command_list, .group = "server", .since = "7.0.0", .summary = "Returns a list of command names.", .complexity = "O(N)"},
        {.name = "getkeys", .arity = -4, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_command_getkeys, .group = "server", .since = "2.8.13", .summary = "Extract keys given a full Redis command", .complexity = "O(N) where N is the number of arguments to the command"},
        {.name = "getkeysandflags", .arity = -4, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_command_getkeysandflags, .group = "server", .since = "7.0.0", .summary = "Extract keys and access flags given a full Redis command", .complexity = "O(N) where N is the number of arguments to the command"},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_command_help, .group = "server", .since = "5.0.0", .summary = "Returns helpful text about the different subcommands."},
    {.name = "memory", .arity = -2, .flags = CMD_CONTAINER, .group = "server", .since = "4.0.0", .summary = "A container for memory diagnostics commands.", .complexity = "Depends on subcommand.", .nsubs = 6},
        {.name = "stats", .arity = 2, .flags = CMD_EXCL | CMD_SUB, .fn = cmd_memory_stats, .group = "server", .since = "4.0.0", .summary = "Returns details about memory usage."},
        {.name = "doctor", .arity = 2, .flags = CMD_EXCL | CMD_SUB, .fn = cmd_memory_doctor, .group = "server", .since = "4.0.0", .summary = "Outputs a memory problems report."},
        {.name = "malloc-stats", .arity = 2, .flags = CMD_SUB, .fn = cmd_memory_malloc_stats, .group = "server", .since = "4.0.0", .summary = "Returns the allocator statistics.", .complexity = "Depends on how much memory is allocated, could be slow"},
        {.name = "purge", .arity = 2, .flags = CMD_SUB, .fn = cmd_memory_purge, .group = "server", .since = "4.0.0", .summary = "Asks the allocator to release memory.", .complexity = "Depends on how much memory is allocated, could be slow"},
        {.name = "usage", .arity = -3, .flags = RO | CMD_SUB, .first_key = 2, .last_key = 2, .step = 1, .fn = cmd_memory_usage, .group = "server", .since = "4.0.0", .summary = "Estimates the memory usage of a key."},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_memory_help, .group = "server", .since = "4.0.0", .summary = "Returns helpful text about the different subcommands."},
    {.name = "cluster", .arity = -2, .flags = CMD_CONTAINER, .group = "cluster", .since = "3.0.0", .summary = "A container for Redis Cluster commands.", .complexity = "Depends on subcommand.", .nsubs = 27},
        {.name = "info", .arity = 2, .flags = CMD_STALE | CMD_SUB, .fn = cmd_cluster_info, .group = "cluster", .since = "3.0.0", .summary = "Returns information about the state of a node."},
        {.name = "nodes", .arity = 2, .flags = CMD_STALE | CMD_SUB, .fn = cmd_cluster_nodes, .group = "cluster", .since = "3.0.0", .summary = "Returns the cluster configuration for a node.", .complexity = "O(N) where N is the total number of Cluster nodes"},
        {.name = "slots", .arity = 2, .flags = CMD_STALE | CMD_SUB, .fn = cmd_cluster_slots, .group = "cluster", .since = "3.0.0", .summary = "Returns the mapping of cluster slots to nodes.", .complexity = "O(N) where N is the total number of Cluster nodes"},
        {.name = "shards", .arity = 2, .flags = CMD_STALE | CMD_SUB, .fn = cmd_cluster_shards, .group = "cluster", .since = "3.0.0", .summary = "Returns the mapping of cluster slots to shards.", .complexity = "O(N) where N is the total number of cluster nodes"},
        {.name = "myid", .arity = 2, .flags = CMD_STALE | CMD_SUB, .fn = cmd_cluster_myid, .group = "cluster", .since = "3.0.0", .summary = "Returns the ID of a node."},
        {.name = "myshardid", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_cluster_myshardid, .group = "cluster", .since = "3.0.0", .summary = "Returns the shard ID of a node."},
        {.name = "keyslot", .arity = 3, .flags = CMD_STALE | CMD_SUB, .fn = cmd_cluster_keyslot, .group = "cluster", .since = "3.0.0", .summary = "Returns the hash slot for a key.", .complexity = "O(N) where N is the number of bytes in the key"},
        {.name = "countkeysinslot", .arity = 3, .flags = CMD_STALE | CMD_EXCL | CMD_SUB, .fn = cmd_cluster_countkeysinslot, .group = "cluster", .since = "3.0.0", .summary = "Returns the number of keys in a hash slot.", .complexity = "O(N) where N is the number of keys in the node (cudis scans its table)"},
        {.name = "getkeysinslot", .arity = 4, .flags = CMD_STALE | CMD_EXCL | CMD_SUB, .fn = cmd_cluster_getkeysinslot, .group = "cluster", .since = "3.0.0", .summary = "Returns the key names in a hash slot.", .complexity = "O(N) where N is the number of keys in the node (cudis scans its table)"},
        {.name = "addslots", .arity = -3, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_addslots, .group = "cluster", .since = "3.0.0", .summary = "Assigns new hash slots to a node.", .complexity = "O(N) where N is the total number of hash slot arguments"},
        {.name = "addslotsrange", .arity = -4, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_addslotsrange, .group = "cluster", .since = "3.0.0", .summary = "Assigns new hash slot ranges to a node.", .complexity = "O(N) where N is the total number of the slots between the start slot and end slot arguments."},
        {.name = "delslots", .arity = -3, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_delslots, .group = "cluster", .since = "3.0.0", .summary = "Sets hash slots as unbound for a node.", .complexity = "O(N) where N is the total number of hash slot arguments"},
        {.name = "delslotsrange", .arity = -4, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_delslotsrange, .group = "cluster", .since = "3.0.0", .summary = "Sets hash slot ranges as unbound for a node.", .complexity = "O(N) where N is the total number of the slots between the start slot and end slot arguments."},
        {.name = "flushslots", .arity = 2, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_EXCL | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_flushslots, .group = "cluster", .since = "3.0.0", .summary = "Deletes all slots information from a node."},
        {.name = "setslot", .arity = -4, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_EXCL | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_setslot, .group = "cluster", .since = "3.0.0", .summary = "Binds a hash slot to a node."},
        {.name = "meet", .arity = -4, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_meet, .group = "cluster", .since = "3.0.0", .summary = "Forces a node to handshake with another node."},
        {.name = "forget", .arity = 3, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_forget, .group = "cluster", .since = "3.0.0", .summary = "Removes a node from the nodes table."},
        {.name = "reset", .arity = -2, .flags = CMD_ADMIN | CMD_STALE | CMD_NOSCRIPT | CMD_SUB | CMD_EXCL, .fn = cmd_cluster_reset, .group = "cluster", .since = "3.0.0", .summary = "Resets a node.", .complexity = "O(N) where N is the number of known nodes. The command may execute a FLUSHALL as a side effect."},
        {.name = "saveconfig", .arity = 2, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_saveconfig, .group = "cluster", .since = "3.0.0", .summary = "Forces a node to save the cluster configuration to disk."},
        {.name = "set-config-epoch", .arity = 3, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_set_config_epoch, .group = "cluster", .since = "3.0.0", .summary = "Sets the configuration epoch for a new node."},
        {.name = "bumpepoch", .arity = 2, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_bumpepoch, .group = "cluster", .since = "3.0.0", .summary = "Advances the cluster config epoch."},
        {.name = "count-failure-reports", .arity = 3, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB, .fn = cmd_cluster_count_failure_reports, .group = "cluster", .since = "3.0.0", .summary = "Returns the number of active failure reports active for a node.", .complexity = "O(N) where N is the number of failure reports"},
        {.name = "replicas", .arity = 3, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB, .fn = cmd_cluster_replicas, .group = "cluster", .since = "3.0.0", .summary = "Lists the replica nodes of a master node.", .complexity = "O(N) where N is the number of replicas."},
        {.name = "slaves", .arity = 3, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB, .fn = cmd_cluster_replicas, .group = "cluster", .since = "3.0.0", .summary = "Lists the replica nodes of a master node.", .complexity = "O(N) where N is the number of replicas."},
        {.name = "replicate", .arity = 3, .flags = CMD_ADMIN | CMD_STALE | CMD_SUB | CMD_NO_ASYNC_LOADING, .fn = cmd_cluster_replicate, .group = "cluster", .since = "3.0.0", .summary = "Configure a node as replica of a master node (cudis: not supported, replicas are out of scope)."},
        {.name = "links", .arity = 2, .flags = CMD_STALE | CMD_SUB, .fn = cmd_cluster_links, .group = "cluster", .since = "3.0.0", .summary = "Returns a list of all TCP links to and from peer nodes.", .complexity = "O(N) where N is the total number of Cluster nodes"},
        {.name = "help", .arity = 2, .flags = CMD_LOADING | CMD_STALE | CMD_SUB, .fn = cmd_cluster_help, .group = "cluster", .since = "3.0.0", .summary = "Returns helpful text about the different subcommands."},
    {.name = "asking", .arity = 1, .flags = CMD_FAST, .fn = cmd_asking, .group = "cluster", .since = "3.0.0", .summary = "Signals that a cluster client is following an -ASK redirect."},
    {.name = "readonly", .arity = 1, .flags = CMD_FAST | CMD_LOADING | CMD_STALE, .fn = cmd_readonly, .group = "cluster", .since = "3.0.0", .summary = "Enables read-only queries for a connection to a Redis Cluster replica node."},
    {.name = "readwrite", .arity = 1, .flags = CMD_FAST | CMD_LOADING | CMD_STALE, .fn = cmd_readwrite, .group = "cluster", .since = "3.0.0", .summary = "Enables read-write queries for a connection to a Redis Cluster replica node."},
    {.name = "migrate", .arity = -6, .flags = CMD_WRITE | CMD_EXCL, .fn = cmd_migrate, .group = "generic", .since = "2.6.0", .summary = "Atomically transfers a key from one Redis instance to another.", .complexity = "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in the target instance. See the pages of these commands for time complexity. Also an O(N) data transfer between the two instances is performed."},
    {.name = "restore-asking", .arity = -4, .flags = CMD_WRITE | CMD_EXCL | CMD_ASKING | CMD_DENYOOM, .first_key = 1, .last_key = 1, .step = 1, .fn = cmd_restore_asking, .group = "server", .since = "3.0.0", .summary = "An internal command for migrating keys in a cluster.", .complexity = "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size."},
    {.name = "shutdown", .arity = -1, .flags = CMD_ALLOW_BUSY | CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_NOMULTI, .fn = cmd_shutdown, .group = "server", .since = "1.0.0", .summary = "Synchronously saves the database(s) to disk and shuts down the Redis server.", .complexity = "O(N)"},
};
/* clang-format on */

#define N_CMDS ((int)(sizeof(table) / sizeof(table[0])))
#define LOOKUP_SIZE 256

/* what setup computes, beside the table */
static const command *lookup_tab[LOOKUP_SIZE];
static char full[N_CMDS][48];
static int parent_of[N_CMDS]; /* -1: top level */
static int top[N_CMDS];
static int n_top;

static uint32_t name_hash(const char *s, size_t len)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ (uint32_t)(unsigned char)(s[i] | 0x20)) * 16777619u;
    }
    return h;
}

void cmd_table_setup(void)
{
    if (n_top > 0) {
        return;
    }
    for (int i = 0; i < N_CMDS;) {
        const command *c = &table[i];
        if (c->flags & CMD_SUB) {
            fprintf(stderr, "command table: '%s' is a subcommand without a container\n", c->name);
            abort();
        }
        top[n_top++] = i;
        parent_of[i] = -1;
        snprintf(full[i], sizeof(full[i]), "%s", c->name);
        uint32_t h = name_hash(c->name, strlen(c->name)) & (LOOKUP_SIZE - 1);
        while (lookup_tab[h]) {
            h = (h + 1) & (LOOKUP_SIZE - 1);
        }
        lookup_tab[h] = c;
        for (int k = 1; k <= c->nsubs; k++) {
            if (i + k >= N_CMDS || !(table[i + k].flags & CMD_SUB)) {
                fprintf(stderr, "command table: '%s' lacks its subcommands\n", c->name);
                abort();
            }
            parent_of[i + k] = i;
            snprintf(full[i + k], sizeof(full[i + k]), "%s|%s", c->name, table[i + k].name);
        }
        i += 1 + c->nsubs;
    }
}

int cmd_count(void)
{
    return N_CMDS;
}

const command *cmd_by_idx(int i)
{
    return &table[i];
}

int cmd_idx(const command *c)
{
    return (int)(c - table);
}

int cmd_top_count(void)
{
    return n_top;
}

const command *cmd_top(int i)
{
    return &table[top[i]];
}

const char *cmd_fullname(const command *c)
{
    return full[cmd_idx(c)];
}

const command *cmd_parent(const command *c)
{
    int p = parent_of[cmd_idx(c)];
    return p < 0 ? NULL : &table[p];
}

const command *cmd_lookup(const char *name, size_t len)
{
    if (len == 0 || len > 32) {
        return NULL;
    }
    uint32_t h = name_hash(name, len) & (LOOKUP_SIZE - 1);
    while (lookup_tab[h]) {
        const command *c = lookup_tab[h];
        if (strlen(c->name) == len && !strncasecmp(c->name, name, len)) {
            return c;
        }
        h = (h + 1) & (LOOKUP_SIZE - 1);
    }
    return NULL;
}

const command *cmd_lookup_sub(const command *parent, const char *name, size_t len)
{
    CMD_FOR_SUBS(s, parent)
    {
        if (strlen(s->name) == len && !strncasecmp(s->name, name, len)) {
            return s;
        }
    }
    return NULL;
}

/* Where a numkeys-style command's count is, and its first key after it. */
static int numkeys_at(const command *cmd)
{
    if (cmd->fn == cmd_eval || cmd->fn == cmd_evalsha || cmd->fn == cmd_eval_ro ||
        cmd->fn == cmd_evalsha_ro || cmd->fn == cmd_fcall || cmd->fn == cmd_fcall_ro ||
        cmd->fn == cmd_blmpop || cmd->fn == cmd_bzmpop || cmd->fn == cmd_zunionstore ||
        cmd->fn == cmd_zinterstore || cmd->fn == cmd_zdiffstore) {
        return 2;
    }
    if (cmd->fn == cmd_sintercard || cmd->fn == cmd_zintercard || cmd->fn == cmd_lmpop ||
        cmd->fn == cmd_zmpop || cmd->fn == cmd_zunion || cmd->fn == cmd_zinter ||
        cmd->fn == cmd_zdiff) {
        return 1;
    }
    return 0;
}

static bool arg_is(const char *s, uint32_t len, const char *word)
{
    return strlen(word) == len && strncasecmp(s, word, len) == 0;
}

int cmd_keys_of(const command *cmd, int argc, char **argv, uint32_t *lens, int *pos, int max)
{
    int n = 0;
#define PUSH(i)                                                                                    \
    do {                                                                                           \
        if (n < max) {                                                                             \
            pos[n] = (i);                                                                          \
        }                                                                                          \
        n++;                                                                                       \
    } while (0)
    int nk = numkeys_at(cmd);
    if (nk > 0) {
        if (nk == 2 && (cmd->fn == cmd_zunionstore || cmd->fn == cmd_zinterstore ||
                        cmd->fn == cmd_zdiffstore)) {
            PUSH(1); /* the destination */
        }
        if (nk >= argc) {
            return n;
        }
        char tmp[24];
        uint32_t l = lens[nk] < sizeof(tmp) - 1 ? lens[nk] : (uint32_t)sizeof(tmp) - 1;
        memcpy(tmp, argv[nk], l);
        tmp[l] = '\0';
        char *end;
        long long k = strtoll(tmp, &end, 10);
        if (end == tmp || *end != '\0' || k < 0) {
            return n; /* the command's own error says so */
        }
        for (long long i = nk + 1; i <= nk + k && i < argc; i++) {
            PUSH((int)i);
        }
        return n;
    }
    if (cmd->fn == cmd_migrate) { /* host port key|"" db timeout ... [KEYS k...] */
        if (argc > 3 && lens[3] > 0) {
            PUSH(3);
            return n;
        }
        for (int i = 6; i < argc; i++) {
            if (arg_is(argv[i], lens[i], "keys")) {
                for (int j = i + 1; j < argc; j++) {
                    PUSH(j);
                }
                break;
            }
        }
        return n;
    }
    if (cmd->first_key <= 0 || cmd->step <= 0) {
        return 0;
    }
    int last = cmd->last_key < 0 ? argc + cmd->last_key : cmd->last_key;
    for (int i = cmd->first_key; i <= last && i < argc; i += cmd->step) {
        PUSH(i);
    }
    if ((cmd->fn == cmd_sort || cmd->fn == cmd_sort_ro)) {
        for (int i = 2; i + 1 < argc; i++) {
            if (arg_is(argv[i], lens[i], "store")) {
                PUSH(i + 1);
                i++;
            } else if (arg_is(argv[i], lens[i], "by") || arg_is(argv[i], lens[i], "get")) {
                i++;
            } else if (arg_is(argv[i], lens[i], "limit")) {
                i += 2;
            }
        }
    }
#undef PUSH
    return n;
}
