/*
 * test_ccht_model_slow.c - the heavy variant of the model test (label
 * "slow": skipped under ASan): more operations, a larger key space.
 */
#define CCHT_MODEL_SLOW 1
#include "test_ccht_model.c"

Test(ccht_model, long_run_mixed, .timeout = 600)
{
    run_model(4 << 20, 0, 8, 60000, 4000000, 0x5eed);
}
