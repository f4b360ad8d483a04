// Fixture: the allowed direction between rooms.
#include "high/a/z.h"
