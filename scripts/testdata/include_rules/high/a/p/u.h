// Fixture: the upper room of high/a/.
