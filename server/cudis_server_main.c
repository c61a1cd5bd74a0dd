/* cudis_server_main.c - the cudis-server program: all of it is in the
 * cudis_server library (server.h). */
#include "server.h"

int main(int argc, char **argv)
{
    return server_main(argc, argv);
}
