// Harbor — nothing to compile: the header declares what libFuzzer defines.
#include "CHarborFuzz.h"
