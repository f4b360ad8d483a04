// Fixture.
