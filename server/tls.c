/*
 * tls.c - TLS for client connections (OpenSSL 3), as Redis 7 offers it: the
 * server's SSL_CTX built from the tls-* options (at start when tls-port is
 * set, again when CONFIG SET changes one; a build that fails keeps the
 * context in force), and the I/O of a connection accepted on tls-port:
 * a non-blocking handshake, reads, writes and a best-effort close.
 *
 * Threading: the context is swapped under a mutex (CONFIG SET may run on any
 * loop) and every SSL takes its own reference to the context it was made
 * from, so an old context lives until its last connection goes. A
 * connection's SSL is touched only by its loop's thread, as the connection.
 */
#include <errno.h>
#include <limits.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "server_internal.h"

#define TLS_PROTO_TLSv1 (1 << 0)
#define TLS_PROTO_TLSv1_1 (1 << 1)
#define TLS_PROTO_TLSv1_2 (1 << 2)
#define TLS_PROTO_TLSv1_3 (1 << 3)
#define TLS_PROTO_DEFAULT (TLS_PROTO_TLSv1_2 | TLS_PROTO_TLSv1_3)

static pthread_mutex_t tls_lock = PTHREAD_MUTEX_INITIALIZER;
static SSL_CTX *server_ctx; /* tls_lock */
static SSL_CTX *client_ctx; /* tls-client-cert-file's, for connections we open (tls_lock) */
static _Atomic int auth_mode = TLS_AUTH_YES;

/* ------------------------------------------------------------------------
 * The context
 * ---------------------------------------------------------------------- */

static const char *opt(const char *s)
{
    return s != NULL && s[0] != '\0' ? s : NULL; /* "" is unset, as Redis's NULL */
}

static int parse_protocols(const char *str)
{
    if (opt(str) == NULL) {
        return TLS_PROTO_DEFAULT;
    }
    char *copy = xstrdup(str);
    int protocols = 0;
    char *save = NULL;
    for (char *t = strtok_r(copy, " ", &save); t != NULL; t = strtok_r(NULL, " ", &save)) {
        if (!strcasecmp(t, "tlsv1")) {
            protocols |= TLS_PROTO_TLSv1;
        } else if (!strcasecmp(t, "tlsv1.1")) {
            protocols |= TLS_PROTO_TLSv1_1;
        } else if (!strcasecmp(t, "tlsv1.2")) {
            protocols |= TLS_PROTO_TLSv1_2;
        } else if (!strcasecmp(t, "tlsv1.3")) {
            protocols |= TLS_PROTO_TLSv1_3;
        } else {
            log_msg(LL_WARNING, "Invalid tls-protocols specified. Use a combination of 'TLSv1', "
                                "'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.");
            protocols = -1;
            break;
        }
    }
    free(copy);
    return protocols;
}

static int password_cb(char *buf, int size, int rwflag, void *u)
{
    (void)rwflag;
    const char *pass = u;
    if (pass == NULL) {
        return -1;
    }
    size_t n = strlen(pass);
    if (n > (size_t)size) {
        return -1;
    }
    memcpy(buf, pass, n);
    return (int)n;
}

static const char *ssl_errstr(char *buf, size_t cap)
{
    ERR_error_string_n(ERR_get_error(), buf, cap);
    return buf;
}

/* What server and client contexts share: protocols, certificate and key, CA,
 * ciphers. NULL when a file or a setting is refused (logged). */
static SSL_CTX *context_create(const srv_config *cf, int protocols, bool client)
{
    const char *cert = opt(client ? cf->tls_client_cert_file : cf->tls_cert_file);
    const char *key = opt(client ? cf->tls_client_key_file : cf->tls_key_file);
    const char *pass = opt(client ? cf->tls_client_key_file_pass : cf->tls_key_file_pass);
    char eb[256];
    SSL_CTX *ctx = SSL_CTX_new(TLS_method()); /* both ways: the cluster bus connects too */
    if (ctx == NULL) {
        log_msg(LL_WARNING, "Failed to create a TLS context: %s", ssl_errstr(eb, sizeof(eb)));
        return NULL;
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION |
                                 SSL_OP_DONT_INSERT_EMPTY_FRAGMENTS | SSL_OP_IGNORE_UNEXPECTED_EOF);
    /* what tls-protocols leaves out (Redis's parseProtocolsConfig) */
    static const struct {
        int bit, version;
    } vers[] = {{TLS_PROTO_TLSv1, TLS1_VERSION},
                {TLS_PROTO_TLSv1_1, TLS1_1_VERSION},
                {TLS_PROTO_TLSv1_2, TLS1_2_VERSION},
                {TLS_PROTO_TLSv1_3, TLS1_3_VERSION}};
    for (size_t i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
        if (!(protocols & vers[i].bit)) {
            SSL_CTX_set_options(ctx, i == 0   ? SSL_OP_NO_TLSv1
                                     : i == 1 ? SSL_OP_NO_TLSv1_1
                                     : i == 2 ? SSL_OP_NO_TLSv1_2
                                              : SSL_OP_NO_TLSv1_3);
        }
    }
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    SSL_CTX_set_default_passwd_cb(ctx, password_cb);
    SSL_CTX_set_default_passwd_cb_userdata(ctx, (void *)pass);
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) <= 0) {
        log_msg(LL_WARNING, "Failed to load certificate: %s: %s", cert,
                ssl_errstr(eb, sizeof(eb)));
        goto fail;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) <= 0) {
        log_msg(LL_WARNING, "Failed to load private key: %s: %s", key, ssl_errstr(eb, sizeof(eb)));
        goto fail;
    }
    const char *ca = opt(cf->tls_ca_cert_file), *cadir = opt(cf->tls_ca_cert_dir);
    if ((ca || cadir) && SSL_CTX_load_verify_locations(ctx, ca, cadir) <= 0) {
        log_msg(LL_WARNING, "Failed to configure CA certificate(s) file/directory: %s",
                ssl_errstr(eb, sizeof(eb)));
        goto fail;
    }
    if (opt(cf->tls_ciphers) && !SSL_CTX_set_cipher_list(ctx, cf->tls_ciphers)) {
        log_msg(LL_WARNING, "Failed to configure ciphers: %s", cf->tls_ciphers);
        goto fail;
    }
    if (opt(cf->tls_ciphersuites) && !SSL_CTX_set_ciphersuites(ctx, cf->tls_ciphersuites)) {
        log_msg(LL_WARNING, "Failed to configure ciphersuites: %s", cf->tls_ciphersuites);
        goto fail;
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

static int load_dh_params(SSL_CTX *ctx, const char *path)
{
    BIO *f = BIO_new_file(path, "r");
    if (f == NULL) {
        log_msg(LL_WARNING, "Failed to load %s: %s", path, strerror(errno));
        return -1;
    }
    EVP_PKEY *pkey = PEM_read_bio_Parameters(f, NULL);
    BIO_free(f);
    if (pkey == NULL) {
        log_msg(LL_WARNING, "%s: failed to read DH params.", path);
        return -1;
    }
    if (SSL_CTX_set0_tmp_dh_pkey(ctx, pkey) <= 0) {
        char eb[256];
        log_msg(LL_WARNING, "Failed to load DH params file: %s: %s", path,
                ssl_errstr(eb, sizeof(eb)));
        EVP_PKEY_free(pkey);
        return -1;
    }
    return 0; /* the context owns pkey now */
}

int tls_auth_parse(const char *s)
{
    if (s != NULL && !strcasecmp(s, "no")) {
        return TLS_AUTH_NO;
    }
    if (s != NULL && !strcasecmp(s, "optional")) {
        return TLS_AUTH_OPTIONAL;
    }
    return TLS_AUTH_YES;
}

void tls_auth_update(void)
{
    atomic_store(&auth_mode, tls_auth_parse(srv.cfg.tls_auth_clients));
}

bool tls_wanted(void)
{
    return srv.cfg.tls_port > 0 || srv.cfg.tls_cluster || srv.cfg.tls_replication;
}

/* Build the contexts from srv.cfg and put them in force; 0, or -1 (logged)
 * with the old ones kept (Redis's tlsConfigure). */
static int configure(void)
{
    const srv_config *cf = &srv.cfg;
    if (opt(cf->tls_cert_file) == NULL) {
        log_msg(LL_WARNING, "No tls-cert-file configured!");
        return -1;
    }
    if (opt(cf->tls_key_file) == NULL) {
        log_msg(LL_WARNING, "No tls-key-file configured!");
        return -1;
    }
    if ((tls_auth_parse(cf->tls_auth_clients) != TLS_AUTH_NO || cf->tls_cluster ||
         cf->tls_replication) &&
        opt(cf->tls_ca_cert_file) == NULL && opt(cf->tls_ca_cert_dir) == NULL) {
        log_msg(LL_WARNING, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when "
                            "tls-cluster, tls-replication or tls-auth-clients are enabled!");
        return -1;
    }
    int protocols = parse_protocols(cf->tls_protocols);
    if (protocols < 0) {
        return -1;
    }
    SSL_CTX *ctx = context_create(cf, protocols, false);
    SSL_CTX *cctx = NULL;
    if (ctx == NULL) {
        return -1;
    }
    if (cf->tls_session_caching) {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_SERVER);
        SSL_CTX_sess_set_cache_size(ctx, (long)cf->tls_session_cache_size);
        SSL_CTX_set_timeout(ctx, (long)cf->tls_session_cache_timeout);
        SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"cudis", 5);
    } else {
        SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
        SSL_CTX_set_num_tickets(ctx, 0); /* no resumption by tickets either */
    }
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_SINGLE_DH_USE);
    if (cf->tls_prefer_server_ciphers) {
        SSL_CTX_set_options(ctx, SSL_OP_CIPHER_SERVER_PREFERENCE);
    }
    /* whole records buffered per read: one recv() serves several requests */
    SSL_CTX_set_read_ahead(ctx, 1);
    if (opt(cf->tls_dh_params_file)) {
        if (load_dh_params(ctx, cf->tls_dh_params_file) != 0) {
            goto fail;
        }
    } else {
        SSL_CTX_set_dh_auto(ctx, 1);
    }
    if (opt(cf->tls_client_cert_file) && opt(cf->tls_client_key_file)) {
        cctx = context_create(cf, protocols, true);
        if (cctx == NULL) {
            goto fail;
        }
    }
    pthread_mutex_lock(&tls_lock);
    SSL_CTX *old = server_ctx, *oldc = client_ctx;
    server_ctx = ctx;
    client_ctx = cctx;
    pthread_mutex_unlock(&tls_lock);
    SSL_CTX_free(old); /* connections made from it keep their reference */
    SSL_CTX_free(oldc);
    tls_auth_update();
    return 0;
fail:
    SSL_CTX_free(ctx);
    SSL_CTX_free(cctx);
    return -1;
}

int tls_setup(void)
{
    tls_auth_update();
    if (!tls_wanted()) {
        return 0; /* nothing of OpenSSL is touched */
    }
    if (srv.cfg.tls_cluster && srv.cfg.tls_port == 0) {
        /* the TLS port is the node's port the cluster announces */
        log_msg(LL_WARNING, "tls-cluster yes needs tls-port.");
        return -1;
    }
    OPENSSL_init_ssl(OPENSSL_INIT_LOAD_CONFIG, NULL);
    if (configure() != 0) {
        log_msg(LL_WARNING, "Failed to configure TLS. Check logs for more info.");
        return -1;
    }
    return 0;
}

int tls_reconfigure(char *err, size_t errlen)
{
    if (!tls_wanted()) {
        tls_auth_update();
        return 0; /* as Redis: nothing is built while TLS is off */
    }
    if (configure() != 0) {
        snprintf(err, errlen, "Unable to update TLS configuration. Check server logs.");
        return -1;
    }
    return 0;
}

void tls_teardown(void)
{
    pthread_mutex_lock(&tls_lock);
    SSL_CTX_free(server_ctx);
    SSL_CTX_free(client_ctx);
    server_ctx = client_ctx = NULL;
    pthread_mutex_unlock(&tls_lock);
}

/* ------------------------------------------------------------------------
 * A connection's I/O
 * ---------------------------------------------------------------------- */

int tls_conn_init(conn *c)
{
    pthread_mutex_lock(&tls_lock);
    SSL *ssl = server_ctx != NULL ? SSL_new(server_ctx) : NULL;
    pthread_mutex_unlock(&tls_lock);
    if (ssl == NULL) {
        char eb[256];
        log_msg(LL_WARNING, "TLS connection from %s refused: %s", c->addr,
                ssl_errstr(eb, sizeof(eb)));
        return -1;
    }
    switch (atomic_load(&auth_mode)) {
    case TLS_AUTH_NO: SSL_set_verify(ssl, SSL_VERIFY_NONE, NULL); break;
    case TLS_AUTH_OPTIONAL: SSL_set_verify(ssl, SSL_VERIFY_PEER, NULL); break;
    default: SSL_set_verify(ssl, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL); break;
    }
    SSL_set_fd(ssl, c->fd);
    SSL_set_accept_state(ssl);
    c->ssl = ssl;
    atomic_fetch_or(&c->flags, CONN_TLS_HS);
    return 0;
}

SSL *tls_bus_ssl(bool outbound)
{
    pthread_mutex_lock(&tls_lock);
    SSL_CTX *ctx = outbound && client_ctx != NULL ? client_ctx : server_ctx;
    SSL *ssl = ctx != NULL ? SSL_new(ctx) : NULL;
    pthread_mutex_unlock(&tls_lock);
    if (ssl == NULL) {
        char eb[256];
        log_msg(LL_WARNING, "Cluster bus: no TLS connection: %s", ssl_errstr(eb, sizeof(eb)));
        return NULL;
    }
    /* both ways the peer's certificate is verified against the CA (the
     * context's SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT) */
    return ssl;
}

/* The write event armed (or not) for what OpenSSL waits on. */
static void want_writable(conn *c, bool on)
{
    if (on && !(c->flags & CONN_WRITE_WAIT)) {
        c->flags |= CONN_WRITE_WAIT;
        event_add(c->wev, NULL);
    } else if (!on && (c->flags & CONN_WRITE_WAIT) && c->out.len == c->out_sent) {
        c->flags &= ~CONN_WRITE_WAIT;
        event_del(c->wev);
    }
}

/* errno for an SSL error that is not WANT_*: 0 means the peer closed. */
static int failure(conn *c, int ret, int e)
{
    if (e == SSL_ERROR_ZERO_RETURN) {
        return 0;
    }
    if (e == SSL_ERROR_SYSCALL) {
        return errno != 0 ? errno : 0;
    }
    char eb[256];
    log_msg(LL_VERBOSE, "TLS error on client id=%llu addr=%s: %s (%d)", (unsigned long long)c->id,
            c->addr, ssl_errstr(eb, sizeof(eb)), ret);
    return EPROTO;
}

int tls_handshake(conn *c)
{
    ERR_clear_error();
    int ret = SSL_accept(c->ssl);
    if (ret == 1) {
        atomic_fetch_and(&c->flags, ~(uint32_t)CONN_TLS_HS);
        want_writable(c, false);
        return 1;
    }
    int e = SSL_get_error(c->ssl, ret);
    if (e == SSL_ERROR_WANT_READ) {
        want_writable(c, false); /* the read event is always armed */
        return 0;
    }
    if (e == SSL_ERROR_WANT_WRITE) {
        want_writable(c, true);
        return 0;
    }
    char eb[256];
    unsigned long code = ERR_peek_error();
    log_msg(LL_VERBOSE, "Error accepting a client connection: %s (addr=%s)",
            code ? ssl_errstr(eb, sizeof(eb)) : (errno ? strerror(errno) : "connection closed"),
            c->addr);
    return -1;
}

ssize_t tls_read(conn *c, char *buf, size_t cap)
{
    size_t got = 0;
    while (got < cap) {
        ERR_clear_error();
        errno = 0;
        size_t want = cap - got;
        int n = SSL_read(c->ssl, buf + got, want > INT_MAX ? INT_MAX : (int)want);
        if (n > 0) {
            got += (size_t)n;
            if (!SSL_has_pending(c->ssl)) {
                break; /* the rest, if any, is in the kernel: the read event fires */
            }
            continue;
        }
        int e = SSL_get_error(c->ssl, n);
        if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
            if (e == SSL_ERROR_WANT_WRITE) {
                atomic_fetch_or(&c->flags, CONN_TLS_READ_WANTS_WRITE);
                want_writable(c, true);
            }
            if (got > 0) {
                break;
            }
            errno = EAGAIN;
            return -1;
        }
        if (got > 0) {
            break; /* the error again at the next read */
        }
        int err = failure(c, n, e);
        if (err == 0) {
            return 0;
        }
        errno = err;
        return -1;
    }
    return (ssize_t)got;
}

bool tls_has_pending(conn *c)
{
    return SSL_has_pending(c->ssl) != 0;
}

ssize_t tls_write(conn *c, const char *buf, size_t n)
{
    ERR_clear_error();
    errno = 0;
    int w = SSL_write(c->ssl, buf, n > INT_MAX ? INT_MAX : (int)n);
    if (w > 0) {
        atomic_fetch_and(&c->flags, ~(uint32_t)CONN_TLS_WRITE_WANTS_READ);
        return w;
    }
    int e = SSL_get_error(c->ssl, w);
    if (e == SSL_ERROR_WANT_WRITE) {
        errno = EAGAIN;
        return -1;
    }
    if (e == SSL_ERROR_WANT_READ) {
        /* the read event (always armed) calls conn_write again */
        atomic_fetch_or(&c->flags, CONN_TLS_WRITE_WANTS_READ);
        errno = EAGAIN;
        return -1;
    }
    int err = failure(c, w, e);
    errno = err != 0 ? err : EPIPE;
    return -1;
}

void tls_close(conn *c)
{
    if (c->ssl == NULL) {
        return;
    }
    if (!(c->flags & CONN_TLS_HS)) {
        ERR_clear_error();
        (void)SSL_shutdown(c->ssl); /* close_notify, best effort: never waits */
    }
    ERR_clear_error();
    SSL_free(c->ssl);
    c->ssl = NULL;
}
