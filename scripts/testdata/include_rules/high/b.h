// Fixture: the allowed direction.
#include "low/c.h"
