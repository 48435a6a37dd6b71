/* Must compile: what a folder may use (the control for the forbidden cases). */
#include "engine.h"
#include "sim.h"

int house_allowed(void);
int house_allowed(void)
{
    return ENG_PRIO_ARRIVAL;
}
