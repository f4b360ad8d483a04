// Fixture: a deliberate violation of the rooms rule one folder deeper (p/ includes q/).
#include "high/a/q/w.h"
