/* Must not compile: calibration-level code reaching into the engine's private header. */
#include "engine_int.h"
