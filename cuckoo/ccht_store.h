/*
 * ccht_store.h - the CCHT as engine "cpu" (engine/engine_store.h): maps an
 * engine_config onto ccht_options and each store op onto the ccht_* call.
 */
#ifndef CCHT_STORE_H
#define CCHT_STORE_H

#include "engine_store.h"

/* name "cpu", concurrent = true. */
extern const engine_store_ops ccht_store_ops;

#endif /* CCHT_STORE_H */
