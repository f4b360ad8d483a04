// Fixture: a deliberate violation of the rooms rule (a/ includes b/).
#include "high/b/y.h"
