// Fixture: the allowed direction between the rooms of a room.
#include "high/a/p/u.h"
