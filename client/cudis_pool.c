/*
 * cudis_pool.c - a thread-safe pool of connections: a mutex-protected
 * stack of idle connections, opened lazily up to a maximum; callers wait on
 * a condition variable (with a deadline) when all are in use. Broken
 * connections are closed on release and their place is freed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cudis_internal.h"

struct cudis_pool {
    cudis_options opt;
    char *host, *unix_path, *password;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    cudis_conn **idle;
    int nidle;
    int total; /* open or being opened */
    int max;
};

cudis_pool *cudis_pool_create(const cudis_options *o, int max_conns, char *err, size_t err_len)
{
    cudis_pool *p = calloc(1, sizeof(*p));
    if (p && max_conns > 0) {
        p->idle = calloc((size_t)max_conns, sizeof(*p->idle));
    }
    if (!p || max_conns <= 0 || !p->idle) {
        if (err) {
            snprintf(err, err_len, max_conns <= 0 ? "max_conns must be > 0" : "out of memory");
        }
        free(p);
        return NULL;
    }
    if (o) {
        p->opt = *o;
    } else {
        cudis_options_default(&p->opt);
    }
    p->host = p->opt.host ? strdup(p->opt.host) : NULL;
    p->unix_path = p->opt.unix_path ? strdup(p->opt.unix_path) : NULL;
    p->password = p->opt.password ? strdup(p->opt.password) : NULL;
    p->opt.host = p->host;
    p->opt.unix_path = p->unix_path;
    p->opt.password = p->password;
    p->max = max_conns;
    pthread_mutex_init(&p->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&p->cv, &ca);
    pthread_condattr_destroy(&ca);
    return p;
}

void cudis_pool_destroy(cudis_pool *p)
{
    if (!p) {
        return;
    }
    for (int i = 0; i < p->nidle; i++) {
        cudis_close(p->idle[i]);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->idle);
    free(p->host);
    free(p->unix_path);
    free(p->password);
    free(p);
}

int cudis_pool_acquire(cudis_pool *p, int wait_ms, cudis_conn **out)
{
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    if (wait_ms > 0) {
        dl.tv_sec += wait_ms / 1000;
        dl.tv_nsec += (long)(wait_ms % 1000) * 1000000L;
        if (dl.tv_nsec >= 1000000000L) {
            dl.tv_sec++;
            dl.tv_nsec -= 1000000000L;
        }
    }
    *out = NULL;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (p->nidle > 0) {
            *out = p->idle[--p->nidle];
            pthread_mutex_unlock(&p->mu);
            return 0;
        }
        if (p->total < p->max) {
            p->total++;
            pthread_mutex_unlock(&p->mu);
            cudis_conn *c = cudis_connect(&p->opt, NULL, 0);
            if (c) {
                *out = c;
                return 0;
            }
            pthread_mutex_lock(&p->mu);
            p->total--;
            pthread_cond_signal(&p->cv);
            pthread_mutex_unlock(&p->mu);
            return CUDIS_E_IO;
        }
        if (wait_ms == 0) {
            break;
        }
        if (wait_ms < 0) {
            pthread_cond_wait(&p->cv, &p->mu);
        } else if (pthread_cond_timedwait(&p->cv, &p->mu, &dl) == ETIMEDOUT) {
            if (p->nidle > 0 || p->total < p->max) {
                continue;
            }
            break;
        }
    }
    pthread_mutex_unlock(&p->mu);
    return CUDIS_E_TIMEOUT;
}

void cudis_pool_release(cudis_pool *p, cudis_conn *c)
{
    if (!c) {
        return;
    }
    bool broken = cudis_conn_broken(c);
    if (broken) {
        cudis_close(c);
    }
    pthread_mutex_lock(&p->mu);
    if (broken) {
        p->total--;
    } else {
        p->idle[p->nidle++] = c;
    }
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
}
