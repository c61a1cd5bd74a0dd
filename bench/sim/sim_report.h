/*
 * sim_report.h - what cudis-sim prints and writes: one row per (trace,
 * cache size, engine), a text table on stdout, a CSV file, and a gnuplot PNG
 * of miss ratio against cache size per trace. Also the reference hit ratios
 * of ../shared/traces/README.md that validate the simulator.
 */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_replay.h"

#define SIM_MAX_T 8 /* thread counts measured per row */

typedef struct sim_row {
    char trace[64];
    uint64_t requests, unique;
    bool bytes_mode;   /* capacity is a byte budget (objects carry their sizes) */
    double fraction;   /* objects mode: of the unique keys */
    uint64_t capacity; /* objects mode: items; bytes mode: the budget in bytes */
    char label[40];    /* engine as asked for: "cpu8", "cpu8@allkeys-random" */
    uint32_t ways;
    int replay; /* sim_replay_mode of the hit-ratio run */
    uint32_t batch;
    sim_run_result hit; /* the hit-ratio run (1 thread) */
    double ref;         /* reference hit ratio, or NAN */
    double ref_tol;     /* reproduced when |hit - ref| < ref_tol (0.00005, bytes: 0.0005) */
    double delta_lru;   /* (hit ratio - LRU's) in points, or NAN */
    int batch1;         /* hits equal to batch-size-1 replay: 1, 0, or -1 unchecked */
    uint64_t batch1_hits;
    uint32_t nspeed;
    uint32_t speed_threads[SIM_MAX_T];
    double speed_rps[SIM_MAX_T];    /* look-aside replay, requests/s */
    double speed_hit[SIM_MAX_T];    /* hit ratio of those passes */
    double speed_cpu_ns[SIM_MAX_T]; /* CPU ns per request (threads summed) */
    double speed_vs_lru;            /* rps / LRU's rps at the largest thread count, or NAN */
    char error[320];                /* non-empty: the run failed */
} sim_row;

/* Reference hit ratio for (trace name, fraction, "lru"/"fifo"), or NAN;
 * given to 4 decimals. */
double sim_reference(const char *trace, double fraction, const char *engine);

/* Reference hit ratio for a byte budget (libCacheSim's own expectations for
 * CloudPhysics: "lru", "fifo", "lfu" at 128 MiB and 1 GiB), or NAN; given
 * to 3 decimals. */
double sim_reference_bytes(const char *trace, uint64_t bytes, const char *engine);

/* Table header / one row, to f. */
void sim_table_header(FILE *f, const uint32_t *threads, uint32_t nthreads, bool bytes_mode);
void sim_table_row(FILE *f, const sim_row *r);

/* CSV: header (thread columns as given) and one line per row. */
void sim_csv_header(FILE *f, const uint32_t *threads, uint32_t nthreads);
void sim_csv_row(FILE *f, const sim_row *r);

/* Write DIR/NAME-TRACE.dat and .gp for the rows of one trace and run
 * gnuplot on them, producing DIR/NAME-TRACE.png. Returns 0, 1 when gnuplot
 * is not installed (nothing drawn, *msg says so), or a negative code. */
int sim_plot(const char *dir, const char *name, const sim_row *rows, size_t nrows, char *msg,
             size_t msg_len);

#endif /* SIM_REPORT_H */
