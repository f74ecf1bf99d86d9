// Harbor — libFuzzer's entry points, for the fuzz driver (Docs/Fuzzing.md).
// Defined by libclang_rt.fuzzer, which `-sanitize=fuzzer` links; this
// target is built only with that flag (Scripts/fuzz.sh).
#ifndef CHARBOR_FUZZ_H
#define CHARBOR_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/// Runs libFuzzer's command-line driver with `callback` as the target.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

/// libFuzzer's own byte-level mutation, for a custom mutator to fall back on.
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

#endif
