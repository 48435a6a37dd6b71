/* Must not compile: plots-level code reaching into the store's private header. */
#include "store_int.h"
