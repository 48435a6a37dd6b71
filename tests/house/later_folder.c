/* Must not compile: the engine using a folder that comes after it (scenarios/). */
#include "scenario.h"
