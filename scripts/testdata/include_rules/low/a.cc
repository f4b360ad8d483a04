// Fixture: a deliberate violation of the include rule (low/ includes high/).
#include "high/b.h"
