/*
 * server.h - the public face of the cudis server library (cudis_server):
 * what the cudis-server program and the unit tests call. The server's
 * pieces have their own headers: resp.h (RESP parser and reply writer),
 * config.h (the option table), util.h (glob matching, number parsing); the
 * batcher and connections are private (server_internal.h).
 */
#ifndef SERVER_H
#define SERVER_H

/* Run cudis-server with the program's arguments: parse the config file and
 * --option pairs, daemonize if asked, create the engine, serve until
 * SIGTERM/SIGINT/SHUTDOWN. Returns the process exit code. Blocks. */
int server_main(int argc, char **argv);

#endif /* SERVER_H */
