/*
 * tests/fuzz/fuzz: the entry point every libFuzzer target defines.  The
 * regression suites (tests/test_fuzz_regress.c, tests/test_diagnose.c)
 * link a target's object and call it on the saved inputs.
 */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* Run the target on data[0..size); always 0 (a failure is a crash). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* TESTS_FUZZ_FUZZ_H */
